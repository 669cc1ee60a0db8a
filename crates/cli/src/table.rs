//! Plain-text tables with aligned columns.

use std::io::{self, Write};

/// A table of strings, written with each column as wide as its widest cell.
pub(crate) struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(header: Vec<&'static str>) -> Self {
        Self { header, rows: Vec::new() }
    }

    pub(crate) fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.header.len());
        self.rows.push(cells);
    }

    pub(crate) fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: Vec<&str>| {
            let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, &w)| format!("{c:<w$}")).collect();
            padded.join("  ").trim_end().to_owned()
        };
        writeln!(out, "{}", line(self.header.clone()))?;
        for row in &self.rows {
            writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
        }
        Ok(())
    }
}
