//! A Markdown heading's fragment, as GitHub writes it: lower case, punctuation dropped,
//! spaces to `-`. One rule for two crates: the docs' link checker (doc_links.rs) uses it as
//! a module of the web crate, and `cargo xtask dist` includes this file by path to give the
//! built guides' headings the same ids, so a fragment that works on GitHub works on the site.

pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}
