//! The headline numbers of a run read off its record tables chunk by chunk as they leave the
//! engine, so that neither `iwlab run` nor `iwlab.run()` needs numpy or pyarrow for them: the medians of flow
//! completion and page delay (completed rows after warm-up, missing and NaN values left out) and
//! the bottleneck link's utilisation and drop rate per direction.
//!
//! The medians are numpy's (`np.median`, which the Python side used before): the middle value of
//! the sorted values, or the two middle ones added and halved — the same two floating-point
//! operations, so the same bits.

use super::{Column, Table};

/// What the headline needs, gathered chunk by chunk: 8 bytes per completed flow or page.
#[derive(Default)]
pub struct Headline {
    completions: Vec<f64>,
    page_delays: Vec<f64>,
    /// (utilisation, drop rate) of the first link row router-left → router-right, and back.
    forward: Option<(f64, f64)>,
    reverse: Option<(f64, f64)>,
}

fn column<'a>(t: &'a Table, name: &str) -> Option<&'a Column> {
    t.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
}

fn bools<'a>(t: &'a Table, name: &str) -> &'a [bool] {
    match column(t, name) {
        Some(Column::Bool(v)) => v,
        _ => &[],
    }
}

/// Values of `value` in rows that completed outside the warm-up, missing and NaN left out.
fn finished(t: &Table, value: &str, out: &mut Vec<f64>) {
    let (done, warm) = (bools(t, "completed"), bools(t, "in_warmup"));
    let keep = |i: usize| done.get(i).copied().unwrap_or(false) && !warm.get(i).copied().unwrap_or(false);
    match column(t, value) {
        Some(Column::OptF64(v)) => {
            out.extend(v.iter().enumerate().filter_map(|(i, x)| x.filter(|x| keep(i) && !x.is_nan())));
        }
        Some(Column::F64(v)) => {
            out.extend(v.iter().enumerate().filter(|&(i, x)| keep(i) && !x.is_nan()).map(|(_, x)| x))
        }
        _ => {}
    }
}

/// numpy's median of finite values (see the module doc); None for no values.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 })
}

impl Headline {
    /// Takes what it needs from one chunk of table `name`.
    pub fn see(&mut self, name: &str, t: &Table) {
        match name {
            "flows" => finished(t, "completion", &mut self.completions),
            "pages" => finished(t, "delay", &mut self.page_delays),
            "links" => self.see_links(t),
            _ => {}
        }
    }

    fn see_links(&mut self, t: &Table) {
        let (Some(Column::Str(from)), Some(Column::Str(to))) = (column(t, "from"), column(t, "to")) else { return };
        let (Some(Column::F64(util)), Some(Column::F64(drops))) = (column(t, "utilisation"), column(t, "drop_rate"))
        else {
            return;
        };
        for (i, (f, to)) in from.iter().zip(to).enumerate() {
            let slot = match (f.as_str(), to.as_str()) {
                ("router-left", "router-right") => &mut self.forward,
                ("router-right", "router-left") => &mut self.reverse,
                _ => continue,
            };
            // The first row of a direction, as the Python side took it.
            slot.get_or_insert((util[i], drops[i]));
        }
    }

    /// (key, value) pairs in the order the summary lists them.
    pub fn finish(mut self) -> Vec<(&'static str, Option<f64>)> {
        vec![
            ("median_flow_completion", median(&mut self.completions)),
            ("median_page_delay", median(&mut self.page_delays)),
            ("bottleneck_forward_utilisation", self.forward.map(|x| x.0)),
            ("bottleneck_forward_drop_rate", self.forward.map(|x| x.1)),
            ("bottleneck_reverse_utilisation", self.reverse.map(|x| x.0)),
            ("bottleneck_reverse_drop_rate", self.reverse.map(|x| x.1)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(values: &[Option<f64>], completed: &[bool], in_warmup: &[bool], column: &'static str) -> Table {
        let mut t = Table::default();
        t.push(column, Column::OptF64(values.to_vec()));
        t.push("completed", Column::Bool(completed.to_vec()));
        t.push("in_warmup", Column::Bool(in_warmup.to_vec()));
        t
    }

    #[test]
    fn the_median_of_an_odd_count_is_the_middle_value() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn the_median_of_an_even_count_is_the_two_middle_values_added_and_halved() {
        // numpy.median gives 0.15000000000000002 here: (0.1 + 0.2) / 2 in floating point.
        assert_eq!(median(&mut [0.2, 9.0, 0.1, -1.0]).map(f64::to_bits), Some(((0.1 + 0.2) / 2.0f64).to_bits()));
        assert_eq!(median(&mut []), None);
    }

    #[test]
    fn only_completed_rows_after_warm_up_with_a_value_count() {
        let mut h = Headline::default();
        let t = rows(
            &[Some(1.0), Some(100.0), None, Some(f64::NAN), Some(3.0), Some(50.0)],
            &[true, true, true, true, true, false],
            &[false, true, false, false, false, false],
            "completion",
        );
        h.see("flows", &t);
        h.see("flows", &rows(&[Some(2.0)], &[true], &[false], "completion")); // a second chunk
        h.see("pages", &rows(&[Some(7.0)], &[false], &[false], "delay"));
        let out = h.finish();
        assert_eq!(out[0], ("median_flow_completion", Some(2.0)));
        assert_eq!(out[1], ("median_page_delay", None));
    }

    #[test]
    fn the_bottleneck_is_the_first_link_row_of_each_direction() {
        let mut t = Table::default();
        let s = |v: &[&str]| Column::Str(v.iter().map(|x| x.to_string()).collect());
        t.push("from", s(&["client-0", "router-left", "router-left", "router-right"]));
        t.push("to", s(&["router-left", "router-right", "router-right", "router-left"]));
        t.push("utilisation", Column::F64(vec![0.1, 0.9, 0.5, 0.2]));
        t.push("drop_rate", Column::F64(vec![0.0, 0.01, 0.5, 0.0]));
        let mut h = Headline::default();
        h.see("links", &t);
        let out = h.finish();
        assert_eq!(
            out[2..4],
            [("bottleneck_forward_utilisation", Some(0.9)), ("bottleneck_forward_drop_rate", Some(0.01))]
        );
        assert_eq!(
            out[4..6],
            [("bottleneck_reverse_utilisation", Some(0.2)), ("bottleneck_reverse_drop_rate", Some(0.0))]
        );
        assert_eq!(Headline::default().finish()[2], ("bottleneck_forward_utilisation", None));
    }
}
