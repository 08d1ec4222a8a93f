//! The order the release bundles' functions are laid out in, chosen for gzip.
//!
//! gzip finds repeats only within its last 32 KiB, so code compresses better when functions
//! that look alike sit near each other. LLVM lays them out in its own order; wasm-opt's
//! `--reorder-functions-by-name` sorts them by the name section instead. Rust's names put a
//! trait impl's `<` first (`<coordlab_sim::raft::Server as Participant>::on_message`), which
//! would gather every trait impl apart from its type's other code, and end in a hash
//! (`::h58e7d9d589df7897`) that does not sort by anything. `sort_keys` rewrites each function's
//! name as a key without either, followed by its index, so functions with the same key keep
//! LLVM's order and every key is distinct.
//!
//! On the consensus bundle (a release build of it alone, after wasm-opt, gzip -9): in LLVM's
//! order 238,240 bytes, sorted by the plain names 236,231, by these keys 234,748. Keys that
//! put the trait first, the method first, or a `drop_in_place` beside its type all did worse
//! (234,984–239,172), and removing the generics as well won 56 bytes more: not worth a rule.
//! The names section is gone from wasm-opt's output (it is run without `-g`), so the keys
//! never ship.

/// The module with the function names of its name section replaced by sort keys; every other
/// section byte for byte. A module without a name section comes back unchanged.
pub fn sort_keys(module: &[u8]) -> Result<Vec<u8>, String> {
    const HEADER: &[u8] = b"\0asm\x01\0\0\0";
    if !module.starts_with(HEADER) {
        return Err("not a WebAssembly module (version 1)".into());
    }
    let mut out = HEADER.to_vec();
    let mut r = Reader {
        bytes: module,
        pos: HEADER.len(),
    };
    while r.pos < module.len() {
        let start = r.pos;
        let id = r.byte()?;
        let size = r.u32()? as usize;
        let body = r.pos;
        let end = body
            .checked_add(size)
            .filter(|&e| e <= module.len())
            .ok_or("a section runs past the end")?;
        if id == 0 && r.name()? == "name" {
            let mut content = encode_name("name");
            while r.pos < end {
                let sub_id = r.byte()?;
                let sub_size = r.u32()? as usize;
                let sub_end = r
                    .pos
                    .checked_add(sub_size)
                    .filter(|&e| e <= end)
                    .ok_or("a name subsection runs past its section")?;
                let sub = if sub_id == 1 {
                    function_keys(&mut r)?
                } else {
                    module[r.pos..sub_end].to_vec()
                };
                if r.pos > sub_end {
                    return Err("a function name runs past its subsection".into());
                }
                content.push(sub_id);
                content.extend(leb(sub.len() as u32));
                content.extend(sub);
                r.pos = sub_end;
            }
            out.push(0);
            out.extend(leb(content.len() as u32));
            out.extend(content);
        } else {
            out.extend_from_slice(&module[start..end]);
        }
        r.pos = end;
    }
    Ok(out)
}

/// The function-names subsection with each name replaced by its sort key.
fn function_keys(r: &mut Reader<'_>) -> Result<Vec<u8>, String> {
    let count = r.u32()?;
    let mut sub = leb(count);
    for _ in 0..count {
        let index = r.u32()?;
        let name = r.name()?;
        sub.extend(leb(index));
        sub.extend(encode_name(&sort_key(name, index)));
    }
    Ok(sub)
}

/// `<a::B as c::D>::f::h0123456789abcdef` → `a::B as c::D>::f|7` for function 7.
fn sort_key(name: &str, index: u32) -> String {
    let name = name.strip_prefix('<').unwrap_or(name);
    let name = match name.rsplit_once("::h") {
        Some((path, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => path,
        _ => name,
    };
    format!("{name}|{index}")
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.bytes.get(self.pos).ok_or("the module ends early")?;
        self.pos += 1;
        Ok(b)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let mut value = 0u64;
        for shift in (0..35).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return u32::try_from(value).map_err(|_| "a number over 32 bits".to_string());
            }
        }
        Err("a number longer than 5 bytes".into())
    }

    fn name(&mut self) -> Result<&str, String> {
        let len = self.u32()? as usize;
        let end = self
            .pos
            .checked_add(len)
            .filter(|&e| e <= self.bytes.len())
            .ok_or("a name runs past the end")?;
        let name = std::str::from_utf8(&self.bytes[self.pos..end]).map_err(|_| "a name is not UTF-8")?;
        self.pos = end;
        Ok(name)
    }
}

fn leb(mut n: u32) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

fn encode_name(s: &str) -> Vec<u8> {
    let mut out = leb(s.len() as u32);
    out.extend_from_slice(s.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module with a type section, and a name section holding a module name (subsection 0)
    /// and two function names (subsection 1).
    fn module(functions: &[(u32, &str)]) -> Vec<u8> {
        let mut names = Vec::new();
        names.push(0);
        let module_name = encode_name("m");
        names.extend(leb(module_name.len() as u32));
        names.extend(module_name);
        let mut sub = leb(functions.len() as u32);
        for (i, name) in functions {
            sub.extend(leb(*i));
            sub.extend(encode_name(name));
        }
        names.push(1);
        names.extend(leb(sub.len() as u32));
        names.extend(sub);
        let mut content = encode_name("name");
        content.extend(names);
        let mut m = b"\0asm\x01\0\0\0".to_vec();
        m.extend([1, 4, 1, 0x60, 0, 0]); // one type: [] -> []
        m.push(0);
        m.extend(leb(content.len() as u32));
        m.extend(content);
        m
    }

    #[test]
    fn keys_drop_the_impl_bracket_and_the_hash_and_end_in_the_index() {
        assert_eq!(
            sort_key(
                "<coordlab_sim::Server as coordlab_sim::Participant>::on_message::h58e7d9d589df7897",
                7
            ),
            "coordlab_sim::Server as coordlab_sim::Participant>::on_message|7"
        );
        assert_eq!(sort_key("main", 0), "main|0");
        // Not a hash: kept.
        assert_eq!(sort_key("a::hello", 3), "a::hello|3");
    }

    #[test]
    fn only_the_function_names_change() {
        let before = module(&[(0, "<a::B as c::D>::f::h0123456789abcdef"), (1, "zeta")]);
        let after = sort_keys(&before).unwrap();
        assert_eq!(after, module(&[(0, "a::B as c::D>::f|0"), (1, "zeta|1")]));
    }

    #[test]
    fn a_module_without_names_is_unchanged_and_a_broken_one_refused() {
        let plain = b"\0asm\x01\0\0\0\x01\x04\x01\x60\0\0".to_vec();
        assert_eq!(sort_keys(&plain).unwrap(), plain);
        assert!(sort_keys(b"\0asm\x02\0\0\0").is_err());
        let mut cut = module(&[(0, "f")]);
        cut.truncate(cut.len() - 1);
        assert!(sort_keys(&cut).is_err());
    }
}
