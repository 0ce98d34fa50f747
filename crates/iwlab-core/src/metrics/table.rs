//! A minimal columnar table: named, typed columns of equal length. The Python binding turns
//! it into an Arrow record batch; `to_csv` serves golden-record tests.

use std::fmt::Write;

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    /// Missing values (e.g. a flow that never completed) are `None`.
    OptF64(Vec<Option<f64>>),
    Bool(Vec<bool>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::OptF64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Appends the values of `other`, a column of the same type.
    pub fn append(&mut self, other: Column) {
        match (self, other) {
            (Column::U64(a), Column::U64(b)) => a.extend(b),
            (Column::I64(a), Column::I64(b)) => a.extend(b),
            (Column::F64(a), Column::F64(b)) => a.extend(b),
            (Column::OptF64(a), Column::OptF64(b)) => a.extend(b),
            (Column::Bool(a), Column::Bool(b)) => a.extend(b),
            (Column::Str(a), Column::Str(b)) => a.extend(b),
            _ => panic!("appending a column of another type"),
        }
    }
    fn cell(&self, i: usize, out: &mut String) {
        let _ = match self {
            Column::U64(v) => write!(out, "{}", v[i]),
            Column::I64(v) => write!(out, "{}", v[i]),
            // Ryu-style shortest round-trip formatting keeps CSVs bit-exact.
            Column::F64(v) => write!(out, "{:?}", v[i]),
            Column::OptF64(v) => match v[i] {
                Some(x) => write!(out, "{x:?}"),
                None => Ok(()),
            },
            Column::Bool(v) => write!(out, "{}", v[i]),
            Column::Str(v) => write!(out, "{}", v[i]),
        };
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &'static str, col: Column) {
        debug_assert!(self.columns.first().is_none_or(|(_, c)| c.len() == col.len()), "column {name} length");
        self.columns.push((name, col));
    }
    /// Appends the rows of `other`, a table with the same columns in the same order.
    pub fn append(&mut self, other: Table) {
        if self.columns.is_empty() {
            *self = other;
            return;
        }
        assert_eq!(self.columns.len(), other.columns.len(), "appending a table of other columns");
        for ((name, a), (other_name, b)) in self.columns.iter_mut().zip(other.columns) {
            assert_eq!(*name, other_name, "appending a table of other columns");
            a.append(b);
        }
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }
    /// CSV with a header line; strings are written as they are (ours never hold commas).
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let names: Vec<&str> = self.columns.iter().map(|(n, _)| *n).collect();
        out.push_str(&names.join(","));
        out.push('\n');
        for i in 0..self.rows() {
            for (j, (_, c)) in self.columns.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                c.cell(i, &mut out);
            }
            out.push('\n');
        }
        out
    }
}

/// Builds a column from a slice of rows.
#[macro_export]
macro_rules! col {
    ($rows:expr, $variant:ident, |$r:ident| $e:expr) => {
        $crate::metrics::Column::$variant($rows.iter().map(|$r| $e).collect())
    };
}
