//! A small SVG writer: elements as text, numbers rounded to a tenth, so the same picture is the same bytes on
//! every platform.

use std::fmt::Write;

/// Colours of the process states (normal, election, reorganization, down), by `trace::state_index`.
pub(crate) const STATE_COLOURS: [&str; 4] = ["#9aa0a6", "#f2a900", "#8e6fd1", "#d0d0d0"];

/// The colour of a leader.
pub(crate) const LEADER: &str = "#2e7d32";

/// `x` with at most one decimal, without a trailing `.0` or a negative zero.
pub(crate) fn num(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r == 0.0 {
        return "0".to_owned();
    }
    if r.fract() == 0.0 { format!("{r:.0}") } else { format!("{r:.1}") }
}

/// `s` with the characters special in XML and HTML (text and attribute values) escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
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

/// An SVG document being written.
pub(crate) struct Svg {
    out: String,
}

impl Svg {
    /// A `w × h` document with a white background and the given extra root attributes.
    pub(crate) fn new(w: f64, h: f64, attributes: &str) -> Self {
        let mut out = String::new();
        let (w, h) = (num(w), num(h));
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
             font-family=\"DejaVu Sans, Verdana, sans-serif\"{attributes}>"
        );
        let _ = writeln!(out, "<rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>");
        Self { out }
    }

    /// Raw markup.
    pub(crate) fn raw(&mut self, s: &str) {
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// A line with a style (`stroke`, `stroke-width`, ... as attributes).
    pub(crate) fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), style: &str) {
        let _ = writeln!(
            self.out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {style}/>",
            num(x1),
            num(y1),
            num(x2),
            num(y2)
        );
    }

    /// A rectangle.
    pub(crate) fn rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), style: &str) {
        let _ = writeln!(
            self.out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {style}/>",
            num(x),
            num(y),
            num(w),
            num(h)
        );
    }

    /// A circle.
    pub(crate) fn circle(&mut self, (x, y): (f64, f64), r: f64, style: &str) {
        let _ = writeln!(self.out, "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {style}/>", num(x), num(y), num(r));
    }

    /// Text; `anchor` is `start`, `middle` or `end`.
    pub(crate) fn text(&mut self, (x, y): (f64, f64), size: f64, anchor: &str, style: &str, text: &str) {
        let _ = writeln!(
            self.out,
            "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{anchor}\" {style}>{}</text>",
            num(x),
            num(y),
            num(size),
            escape(text)
        );
    }

    /// A cross centred on a point.
    pub(crate) fn cross(&mut self, (x, y): (f64, f64), r: f64, style: &str) {
        self.line((x - r, y - r), (x + r, y + r), style);
        self.line((x - r, y + r), (x + r, y - r), style);
    }

    /// A diamond centred on a point.
    pub(crate) fn diamond(&mut self, (x, y): (f64, f64), r: f64, style: &str) {
        let _ = writeln!(
            self.out,
            "<polygon points=\"{},{} {},{} {},{} {},{}\" {style}/>",
            num(x),
            num(y - r),
            num(x + r),
            num(y),
            num(x),
            num(y + r),
            num(x - r),
            num(y)
        );
    }

    /// The finished document.
    pub(crate) fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

/// About `target` round tick values covering `[0, end]`: multiples of 1, 2 or 5 times a power of ten.
pub(crate) fn ticks(end: f64, target: usize) -> Vec<f64> {
    if end <= 0.0 || !end.is_finite() {
        return vec![0.0];
    }
    let raw = end / target.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * power).find(|&s| s >= raw).unwrap_or(10.0 * power);
    let count = (end / step).floor() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_ticks() {
        assert_eq!(
            (num(1.0), num(1.04), num(1.05), num(-0.01), num(12.345)),
            ("1".into(), "1".into(), "1.1".into(), "0".into(), "12.3".into())
        );
        assert_eq!(ticks(16.0, 8), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]);
        assert_eq!(ticks(0.0, 8), vec![0.0]);
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
