//! The report as raw columns: the `flows`, `series` and `link_series` tables as little-endian
//! buffers in the Arrow memory layout, so Python wraps them as Arrow arrays without parsing
//! (`pyarrow.Array.from_buffers`; python/ccbench/backends/sim.py). JSON of a run with 100 000
//! flows is ~100 MB and turning it into Python objects and back into Arrow costs far more than
//! the simulation; these buffers cost one copy.
//!
//! The values are those of the JSON report (report.rs), including its one conversion: a
//! non-finite f64 is null (serde_json writes NaN and ±inf as `null`).
use crate::report::SimReport;
use serde::Serialize;

/// Where one column's buffers lie in [`Columns::blob`]: `[offset, length]` in bytes, each
/// buffer starting at a multiple of 8.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnLayout {
    pub name: &'static str,
    /// Arrow type: "uint32", "uint64", "float64", "bool" (bit-packed) or "string" (utf-8).
    pub dtype: &'static str,
    /// Validity bitmap (bit i of byte i / 8, least significant first, 1 = valid); absent when
    /// no value is null.
    pub validity: Option<[usize; 2]>,
    pub null_count: usize,
    /// i32 offsets into `data` (strings only).
    pub offsets: Option<[usize; 2]>,
    pub data: [usize; 2],
}

#[derive(Debug, Clone, Serialize)]
pub struct TableLayout {
    pub rows: usize,
    pub columns: Vec<ColumnLayout>,
}

/// The report in two parts: `header` (JSON) holds the small parts as report.rs serialises
/// them (`run`, `links`, `counters`) and `tables` (name → [`TableLayout`]); `blob` holds
/// every column's buffers.
pub struct Columns {
    pub header: String,
    pub blob: Vec<u8>,
}

#[derive(Serialize)]
struct Header<'a> {
    run: &'a crate::report::RunSummary,
    links: &'a [crate::report::LinkCounters],
    counters: &'a [crate::tcp::mib::CounterRow],
    tables: Tables,
}

#[derive(Serialize)]
struct Tables {
    flows: TableLayout,
    series: TableLayout,
    link_series: TableLayout,
}

/// Appends buffers to the blob, each 8-byte aligned.
struct Blob {
    bytes: Vec<u8>,
}

impl Blob {
    fn align(&mut self) -> usize {
        let pad = (8 - self.bytes.len() % 8) % 8;
        self.bytes.resize(self.bytes.len() + pad, 0);
        self.bytes.len()
    }

    /// A validity bitmap for `valid`, or None when every entry is valid.
    fn validity(&mut self, valid: &[bool]) -> (Option<[usize; 2]>, usize) {
        let nulls = valid.iter().filter(|v| !**v).count();
        if nulls == 0 {
            return (None, 0);
        }
        (Some(self.bits(valid)), nulls)
    }

    fn bits(&mut self, bits: &[bool]) -> [usize; 2] {
        let start = self.align();
        for chunk in bits.chunks(8) {
            let byte = chunk.iter().enumerate().fold(0u8, |b, (i, &v)| b | ((v as u8) << i));
            self.bytes.push(byte);
        }
        [start, self.bytes.len() - start]
    }

    fn f64s(&mut self, name: &'static str, values: impl Iterator<Item = Option<f64>>) -> ColumnLayout {
        let start = self.align();
        let mut valid = Vec::new();
        for v in values {
            let v = v.filter(|x| x.is_finite());
            valid.push(v.is_some());
            self.bytes.extend_from_slice(&v.unwrap_or(0.0).to_le_bytes());
        }
        let data = [start, self.bytes.len() - start];
        let (validity, null_count) = self.validity(&valid);
        ColumnLayout { name, dtype: "float64", validity, null_count, offsets: None, data }
    }

    fn u32s(&mut self, name: &'static str, values: impl Iterator<Item = u32>) -> ColumnLayout {
        let start = self.align();
        for v in values {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
        let data = [start, self.bytes.len() - start];
        ColumnLayout { name, dtype: "uint32", validity: None, null_count: 0, offsets: None, data }
    }

    fn u64s(&mut self, name: &'static str, values: impl Iterator<Item = u64>) -> ColumnLayout {
        let start = self.align();
        for v in values {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
        let data = [start, self.bytes.len() - start];
        ColumnLayout { name, dtype: "uint64", validity: None, null_count: 0, offsets: None, data }
    }

    fn bools(&mut self, name: &'static str, values: impl Iterator<Item = bool>) -> ColumnLayout {
        let values: Vec<bool> = values.collect();
        let data = self.bits(&values);
        ColumnLayout { name, dtype: "bool", validity: None, null_count: 0, offsets: None, data }
    }

    fn strs<'s>(&mut self, name: &'static str, values: impl Iterator<Item = &'s str>) -> Result<ColumnLayout, String> {
        let mut text = Vec::new();
        let mut offsets = vec![0i32];
        for v in values {
            text.extend_from_slice(v.as_bytes());
            let end = i32::try_from(text.len()).map_err(|_| format!("column {name}: more than 2 GiB of text"))?;
            offsets.push(end);
        }
        let start = self.align();
        for o in &offsets {
            self.bytes.extend_from_slice(&o.to_le_bytes());
        }
        let offs = [start, self.bytes.len() - start];
        let start = self.align();
        self.bytes.extend_from_slice(&text);
        let data = [start, self.bytes.len() - start];
        Ok(ColumnLayout { name, dtype: "string", validity: None, null_count: 0, offsets: Some(offs), data })
    }
}

/// The report as [`Columns`]. Column names and order are those of the JSON report's fields.
pub fn to_columns(report: &SimReport) -> Result<Columns, String> {
    let f = &report.flows;
    let s = &report.series;
    let l = &report.link_series;
    // ~90 bytes per series row and per flow; a guess that saves most reallocations
    let mut b = Blob { bytes: Vec::with_capacity(96 * (s.t_s.len() + f.len()) + 24 * l.t_s.len()) };

    let flows = TableLayout {
        rows: f.len(),
        columns: vec![
            b.u32s("flow_id", f.iter().map(|r| r.flow_id)),
            b.u32s("group", f.iter().map(|r| r.group)),
            b.strs("cc", f.iter().map(|r| r.cc.as_str()))?,
            b.f64s("goodput_bps", f.iter().map(|r| Some(r.goodput_bps))),
            b.u64s("bytes_acked", f.iter().map(|r| r.bytes_acked)),
            b.u64s("retransmits", f.iter().map(|r| r.retransmits)),
            b.u64s("loss_events", f.iter().map(|r| r.loss_events)),
            b.f64s("rtt_min_ms", f.iter().map(|r| r.rtt_min_ms)),
            b.f64s("rtt_mean_ms", f.iter().map(|r| r.rtt_mean_ms)),
            b.f64s("rtt_p50_ms", f.iter().map(|r| r.rtt_p50_ms)),
            b.f64s("rtt_p95_ms", f.iter().map(|r| r.rtt_p95_ms)),
            b.f64s("rtt_p99_ms", f.iter().map(|r| r.rtt_p99_ms)),
            b.f64s("cwnd_mean", f.iter().map(|r| Some(r.cwnd_mean))),
            b.f64s("start_s", f.iter().map(|r| Some(r.start_s))),
            b.f64s("end_s", f.iter().map(|r| Some(r.end_s))),
            b.f64s("fct_s", f.iter().map(|r| r.fct_s)),
            b.bools("completed", f.iter().map(|r| r.completed)),
            b.u64s("data_sent", f.iter().map(|r| r.data_sent)),
            b.u64s("data_received", f.iter().map(|r| r.data_received)),
            b.u64s("data_dropped", f.iter().map(|r| r.data_dropped)),
            b.u64s("data_in_network", f.iter().map(|r| r.data_in_network)),
        ],
    };
    let series = TableLayout {
        rows: s.t_s.len(),
        columns: vec![
            b.u32s("flow_id", s.flow_id.iter().copied()),
            b.f64s("t_s", s.t_s.iter().map(|v| Some(*v))),
            b.f64s("goodput_bps", s.goodput_bps.iter().map(|v| Some(*v))),
            b.u32s("cwnd_pkts", s.cwnd_pkts.iter().copied()),
            b.f64s("rtt_ms", s.rtt_ms.iter().copied()),
            b.f64s("pacing_bps", s.pacing_bps.iter().copied()),
            b.u32s("inflight_pkts", s.inflight_pkts.iter().copied()),
            b.strs("cc_state", s.cc_state.iter().map(String::as_str))?,
            b.f64s("bw_est_bps", s.bw_est_bps.iter().copied()),
            b.f64s("min_rtt_ms", s.min_rtt_ms.iter().copied()),
            b.f64s("delivery_rate_bps", s.delivery_rate_bps.iter().copied()),
            b.u64s("retransmits", s.retransmits.iter().copied()),
        ],
    };
    let link_series = TableLayout {
        rows: l.t_s.len(),
        columns: vec![
            b.f64s("t_s", l.t_s.iter().map(|v| Some(*v))),
            b.u64s("queue_bytes", l.queue_bytes.iter().copied()),
            b.f64s("probe_rtt_ms", l.probe_rtt_ms.iter().copied()),
            b.f64s("sojourn_ms", l.sojourn_ms.iter().copied()),
            b.f64s("probe_rtt_p50_ms", l.probe_rtt_p50_ms.iter().copied()),
            b.f64s("probe_rtt_p95_ms", l.probe_rtt_p95_ms.iter().copied()),
        ],
    };
    let header = Header {
        run: &report.run,
        links: &report.links,
        counters: &report.counters,
        tables: Tables { flows, series, link_series },
    };
    let header = serde_json::to_string(&header).map_err(|e| e.to_string())?;
    Ok(Columns { header, blob: b.bytes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::*;
    use serde_json::Value;

    fn report() -> SimReport {
        let mut flows: Vec<FlowConfig> = (0..3).map(|id| FlowConfig::bulk(id, "cubic", 1 << 20)).collect();
        flows[2].cc = "bbr".into();
        flows[2].start_ns = 900_000_000; // starts late: some null RTTs in the series
        let mut c =
            SimConfig::new("cols", 1_000_000_000, BottleneckConfig::droptail(20_000_000, 20_000_000, 1.0), flows);
        c.bottleneck.loss = LossConfig::Bernoulli { p: 0.01 };
        crate::run(&c).unwrap()
    }

    fn slice(blob: &[u8], at: [usize; 2]) -> &[u8] {
        assert_eq!(at[0] % 8, 0, "buffers are 8-byte aligned");
        &blob[at[0]..at[0] + at[1]]
    }

    /// Decode a column back to the JSON the report serialises to.
    fn decode(blob: &[u8], c: &ColumnLayout, rows: usize) -> Vec<Value> {
        let data = slice(blob, c.data);
        let valid = |i: usize| c.validity.is_none_or(|v| slice(blob, v)[i / 8] >> (i % 8) & 1 == 1);
        (0..rows)
            .map(|i| {
                if !valid(i) {
                    return Value::Null;
                }
                match c.dtype {
                    "uint32" => Value::from(u32::from_le_bytes(data[i * 4..i * 4 + 4].try_into().unwrap())),
                    "uint64" => Value::from(u64::from_le_bytes(data[i * 8..i * 8 + 8].try_into().unwrap())),
                    "float64" => Value::from(f64::from_le_bytes(data[i * 8..i * 8 + 8].try_into().unwrap())),
                    "bool" => Value::from(data[i / 8] >> (i % 8) & 1 == 1),
                    "string" => {
                        let o = slice(blob, c.offsets.unwrap());
                        let at = |k: usize| i32::from_le_bytes(o[k * 4..k * 4 + 4].try_into().unwrap()) as usize;
                        Value::from(std::str::from_utf8(&data[at(i)..at(i + 1)]).unwrap())
                    }
                    t => panic!("unknown dtype {t}"),
                }
            })
            .collect()
    }

    #[test]
    fn columns_hold_every_field_of_the_json_report_with_the_same_values() {
        let r = report();
        let cols = to_columns(&r).unwrap();
        let json: Value = serde_json::to_value(&r).unwrap();
        let header: Value = serde_json::from_str(&cols.header).unwrap();
        for key in ["run", "links", "counters"] {
            assert_eq!(header[key], json[key], "{key}");
        }
        let layout: Value = header["tables"].clone();
        let tables: Tables = Tables {
            flows: serde_json::from_value::<TableLayoutOwned>(layout["flows"].clone()).unwrap().into(),
            series: serde_json::from_value::<TableLayoutOwned>(layout["series"].clone()).unwrap().into(),
            link_series: serde_json::from_value::<TableLayoutOwned>(layout["link_series"].clone()).unwrap().into(),
        };
        // flows: rows of objects in the JSON report
        let rows = json["flows"].as_array().unwrap();
        let mut names: Vec<&str> = tables.flows.columns.iter().map(|c| c.name).collect();
        names.sort_unstable();
        let keys: Vec<&str> = rows[0].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(names, keys, "the flows columns are FlowSummary's fields (sorted: Value's keys are)");
        for c in &tables.flows.columns {
            let from_json: Vec<Value> = rows.iter().map(|row| row[c.name].clone()).collect();
            assert_eq!(decode(&cols.blob, c, tables.flows.rows), from_json, "flows.{}", c.name);
        }
        // series and link_series: objects of arrays
        let mut nulls_seen = 0;
        for (name, t) in [("series", &tables.series), ("link_series", &tables.link_series)] {
            let obj = json[name].as_object().unwrap();
            let mut names: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
            names.sort_unstable();
            let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
            assert_eq!(names, keys, "the {name} columns are the struct's fields");
            for c in &t.columns {
                nulls_seen += c.null_count;
                assert_eq!(&Value::from(decode(&cols.blob, c, t.rows)), &obj[c.name], "{name}.{}", c.name);
            }
        }
        assert!(nulls_seen > 0, "the scenario exercises null values");
    }

    #[test]
    fn non_finite_floats_are_null_as_in_the_json() {
        let mut b = Blob { bytes: vec![1] };
        let c = b.f64s("x", [Some(1.5), Some(f64::NAN), None, Some(f64::INFINITY)].into_iter());
        assert_eq!(c.null_count, 3);
        assert_eq!(decode(&b.bytes, &c, 4), vec![Value::from(1.5), Value::Null, Value::Null, Value::Null]);
    }

    // The layout read back in tests (the serialised form has owned names).
    #[derive(serde::Deserialize)]
    struct ColumnLayoutOwned {
        name: String,
        dtype: String,
        validity: Option<[usize; 2]>,
        null_count: usize,
        offsets: Option<[usize; 2]>,
        data: [usize; 2],
    }

    #[derive(serde::Deserialize)]
    struct TableLayoutOwned {
        rows: usize,
        columns: Vec<ColumnLayoutOwned>,
    }

    impl From<TableLayoutOwned> for TableLayout {
        fn from(t: TableLayoutOwned) -> Self {
            let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
            TableLayout {
                rows: t.rows,
                columns: t
                    .columns
                    .into_iter()
                    .map(|c| ColumnLayout {
                        name: leak(c.name),
                        dtype: leak(c.dtype),
                        validity: c.validity,
                        null_count: c.null_count,
                        offsets: c.offsets,
                        data: c.data,
                    })
                    .collect(),
            }
        }
    }
}
