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
}
