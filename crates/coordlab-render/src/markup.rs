//! Writing SVG and HTML text: escaping, whole-pixel numbers, and a small element writer.

use std::fmt::Write;

/// `text` safe inside an element or a double-quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate as a whole pixel.
pub fn px(v: f64) -> i64 {
    v.round() as i64
}

/// SVG or HTML text being written.
#[derive(Default)]
pub struct Markup {
    pub out: String,
}

impl Markup {
    /// `<tag attrs…>`: `attrs` are written as given (values must already be escaped).
    pub fn open(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.out.push('<');
        self.out.push_str(tag);
        for (k, v) in attrs {
            let _ = write!(self.out, " {k}=\"{v}\"");
        }
        self.out.push('>');
    }

    pub fn close(&mut self, tag: &str) {
        let _ = write!(self.out, "</{tag}>");
    }

    /// `<tag attrs…/>`.
    pub fn leaf(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.open(tag, attrs);
        self.out.pop();
        self.out.push_str("/>");
    }

    /// `<tag attrs…>text</tag>`, with the text escaped.
    pub fn text(&mut self, tag: &str, attrs: &[(&str, &str)], text: &str) {
        self.open(tag, attrs);
        self.out.push_str(&escape(text));
        self.close(tag);
    }

    /// A `<title>` (the tooltip, and what a screen reader reads for the element).
    pub fn title(&mut self, text: &str) {
        self.text("title", &[], text);
    }
}

impl Markup {
    /// An element written attribute by attribute, straight into the text:
    /// `s.el("rect").num("x", 3).attr("fill", "#fff").leaf()`. No list of pairs and no string
    /// per number, which keeps a drawing of many kinds of element small in the wasm bundle.
    pub fn el<'a>(&'a mut self, tag: &'a str) -> El<'a> {
        self.out.push('<');
        self.out.push_str(tag);
        El {
            out: &mut self.out,
            tag,
        }
    }
}

/// An element whose start tag is being written; see [`Markup::el`].
pub struct El<'a> {
    out: &'a mut String,
    tag: &'a str,
}

impl El<'_> {
    /// ` name="value"`; the value must already be escaped.
    #[inline(never)]
    pub fn attr(self, name: &str, value: &str) -> Self {
        self.out.push(' ');
        self.out.push_str(name);
        self.out.push_str("=\"");
        self.out.push_str(value);
        self.out.push('"');
        self
    }

    /// ` name="number"`.
    #[inline(never)]
    pub fn num(self, name: &str, value: impl std::fmt::Display) -> Self {
        let _ = write!(self.out, " {name}=\"{value}\"");
        self
    }

    /// Ends the element: `/>`.
    #[inline(never)]
    pub fn leaf(self) {
        self.out.push_str("/>");
    }

    /// Ends the start tag: `>` (the caller closes the element).
    #[inline(never)]
    pub fn open(self) {
        self.out.push('>');
    }

    /// `>text</tag>`, with the text escaped.
    #[inline(never)]
    pub fn text(self, text: &str) {
        self.out.push('>');
        self.out.push_str(&escape(text));
        let _ = write!(self.out, "</{}>", self.tag);
    }
}

/// A number as attribute text.
pub fn n(v: impl std::fmt::Display) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn writes_elements() {
        let mut s = Markup::default();
        s.open("g", &[("class", "node")]);
        s.leaf("rect", &[("x", "1")]);
        s.text("text", &[], "a<b");
        s.close("g");
        assert_eq!(s.out, r#"<g class="node"><rect x="1"/><text>a&lt;b</text></g>"#);
    }

    #[test]
    fn writes_elements_attribute_by_attribute() {
        let mut s = Markup::default();
        s.el("g").attr("class", "node").open();
        s.el("rect").num("x", -3).num("w", 7usize).leaf();
        s.el("text").attr("fill", "#fff").text("a<b");
        s.close("g");
        assert_eq!(
            s.out,
            r##"<g class="node"><rect x="-3" w="7"/><text fill="#fff">a&lt;b</text></g>"##
        );
    }
}
