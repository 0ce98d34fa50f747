//! The record tables written to Parquet by the extension itself, chunk by chunk as the engine
//! hands them over (one row group per chunk), so that `iwlab run --out` needs no pyarrow: its
//! import alone cost ~0.2 s of CPU per run (bench/README.md, "Fourth pass").
//!
//! The files read back exactly as those pyarrow's `ParquetWriter` wrote from the same columns:
//! every column OPTIONAL (pyarrow's fields are nullable), counts as INT64, reals as DOUBLE,
//! booleans as BOOLEAN, labels as UTF-8 BYTE_ARRAY, in table order. Snappy compression and
//! dictionary encoding, as pyarrow's defaults.

use iwlab_core::metrics::{Column, Table};
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One Parquet file per table, `DIR/NAME.parquet`, opened on the table's first chunk.
pub struct ParquetTables {
    dir: PathBuf,
    files: Vec<(String, SerializedFileWriter<File>)>,
}

fn schema(t: &Table) -> parquet::errors::Result<Type> {
    let mut fields = Vec::with_capacity(t.columns.len());
    for (name, col) in &t.columns {
        let (physical, logical) = match col {
            Column::U64(_) | Column::I64(_) => (Physical::INT64, None),
            Column::F64(_) | Column::OptF64(_) => (Physical::DOUBLE, None),
            Column::Bool(_) => (Physical::BOOLEAN, None),
            Column::Str(_) => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
        };
        let field = Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()?;
        fields.push(Arc::new(field));
    }
    Type::group_type_builder("schema").with_fields(fields).build()
}

/// Writes one column of a chunk. Definition level 1 = a value, 0 = missing.
fn write_column(
    w: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    col: &Column,
) -> parquet::errors::Result<()> {
    let all = vec![1i16; col.len()];
    match col {
        Column::U64(v) => {
            // Counts fit in i64 (the Python side always read them as int64).
            let v: Vec<i64> = v.iter().map(|&x| x as i64).collect();
            w.typed::<Int64Type>().write_batch(&v, Some(&all), None)?;
        }
        Column::I64(v) => {
            w.typed::<Int64Type>().write_batch(v, Some(&all), None)?;
        }
        Column::F64(v) => {
            w.typed::<DoubleType>().write_batch(v, Some(&all), None)?;
        }
        Column::OptF64(v) => {
            let levels: Vec<i16> = v.iter().map(|x| i16::from(x.is_some())).collect();
            let values: Vec<f64> = v.iter().flatten().copied().collect();
            w.typed::<DoubleType>().write_batch(&values, Some(&levels), None)?;
        }
        Column::Bool(v) => {
            w.typed::<BoolType>().write_batch(v, Some(&all), None)?;
        }
        Column::Str(v) => {
            let values: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_bytes().to_vec())).collect();
            w.typed::<ByteArrayType>().write_batch(&values, Some(&all), None)?;
        }
    }
    Ok(())
}

impl ParquetTables {
    pub fn new(dir: &Path) -> Self {
        ParquetTables { dir: dir.to_path_buf(), files: Vec::new() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.parquet"))
    }

    /// Appends a chunk of table `name` as one row group (none for an empty chunk: the file
    /// still holds the schema).
    pub fn write(&mut self, name: &str, t: &Table) -> Result<(), String> {
        let path = self.path(name);
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let at = match self.files.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                std::fs::create_dir_all(&self.dir).map_err(|e| fail(&e))?;
                let file = File::create(&path).map_err(|e| fail(&e))?;
                let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
                let schema = schema(t).map_err(|e| fail(&e))?;
                let writer =
                    SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).map_err(|e| fail(&e))?;
                self.files.push((name.to_string(), writer));
                self.files.len() - 1
            }
        };
        if t.columns.first().is_none_or(|(_, c)| c.is_empty()) {
            return Ok(());
        }
        let writer = &mut self.files[at].1;
        let result = (|| {
            let mut group = writer.next_row_group()?;
            for (_, col) in &t.columns {
                let mut w = group.next_column()?.expect("one column writer per schema field");
                write_column(&mut w, col)?;
                w.close()?;
            }
            group.close().map(|_| ())
        })();
        result.map_err(|e| fail(&e))
    }

    /// Closes every file (footer written, buffers flushed); the names of the tables written, in
    /// the order they came.
    pub fn finish(self) -> Result<Vec<String>, String> {
        let mut names = Vec::with_capacity(self.files.len());
        for (name, writer) in self.files {
            let path = self.dir.join(format!("{name}.parquet"));
            // The footer, then the writer's own buffer flushed (errors reported, not dropped).
            writer.into_inner().map_err(|e| format!("{}: {e}", path.display()))?;
            names.push(name);
        }
        Ok(names)
    }
}
