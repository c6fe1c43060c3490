//! The `quantize` pass configuration, in the shape of MASE's TOML configs.
//!
//! ```toml
//! by = "type"                # "type" (key = mase_op), "name" (node name) or "regex_name"
//!
//! [default.config]           # every compute node no other table matches
//! name = "NA"                # "NA" = leave in float
//!
//! [linear.config]
//! name = "integer"
//! data_in_width = 8
//! data_in_frac_width = 4
//! weight_width = 8
//! weight_frac_width = 6
//! bias_width = 8
//! bias_frac_width = 4
//! data_out_width = 8
//! data_out_frac_width = 4
//! rounding = "TRN"           # optional, every tensor of the node; default TRN (data),
//! overflow = "SAT"           #   RND_CONV (weight, bias); overflow default SAT
//! weight_rounding = "RND"    # optional per-kind override: <kind>_rounding / <kind>_overflow
//! ```
//!
//! The same tables nested under `[passes.quantize]` in a flow config work too
//! ([`quantize_table_from_flow`]). `by` defaults to `"type"`.
//!
//! Matching rules and errors (decided to be strict, as a hardware engineer wants to know when a
//! config does not do what it says):
//! - `by = "type"`: a key that is not a mase op at all is an **error** listing the mase ops; a
//!   valid mase op that does not occur in the graph is a **warning** in the info map (the same
//!   config is often shared by several models).
//! - `by = "name"`: a key that names no node is an **error** naming the key and listing the
//!   closest node names.
//! - `by = "regex_name"`: each key is a regular expression that must match a **whole** node
//!   name; an invalid regex, a regex that matches no node, and a node matched by two regexes
//!   are **errors**.
//! - `[default.config]` applies to compute nodes (module, module_related_func, builtin_func)
//!   that no key matches. Placeholders, constants, implicit nodes and the output are never
//!   given the default: they carry their neighbours' formats (see [`super::plan`]).
//! - In an `integer` table, `data_in_*` is required for nodes with float data inputs,
//!   `weight_*` / `bias_*` for nodes that own those tensors, and `data_out_*` defaults to the
//!   `data_in` width and fraction (required for a node without data inputs). Width 0 or > 64
//!   (> 63 unsigned), an unknown field, an unknown mode name: errors naming the table and field
//!   (a table's fields are a serde struct denying unknown fields, so the error lists them).

use super::channel::Granularity;
use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::fixed::{FixedFormat, Overflow, Rounding};
use crate::graph::{MaseGraph, NodeId};
use crate::metadata::MaseType;

use super::plan::{has_float_result, NodeFormats, Plan};

/// How table keys select nodes (`by = "type" | "name" | "regex_name"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchBy {
    /// Key = mase op.
    Type,
    /// Key = node name.
    Name,
    /// Key = regular expression over node names (whole-name match).
    RegexName,
}

/// The tensor kinds a table configures.
pub const KINDS: [&str; 4] = ["data_in", "weight", "bias", "data_out"];

/// One tensor kind's settings in a table.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KindConfig {
    /// `<kind>_width`.
    pub width: Option<u32>,
    /// `<kind>_frac_width`.
    pub frac: Option<i32>,
    /// Rounding (`<kind>_rounding`, else `rounding`, else the default for the kind).
    pub rounding: Rounding,
    /// Overflow (`<kind>_overflow`, else `overflow`, else SAT).
    pub overflow: Overflow,
}

/// One `[<key>.config]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryConfig {
    /// The key (mase op, node name, regex or `default`).
    pub key: String,
    /// False for `name = "NA"` (leave in float).
    pub integer: bool,
    /// Settings per kind, in [`KINDS`] order.
    pub kinds: [KindConfig; 4],
    /// `weight_granularity`: per-channel weights take `weight_width` and choose each output
    /// channel's fraction from its range (no `weight_frac_width`).
    pub weight_granularity: Granularity,
}

impl EntryConfig {
    /// The format of a kind, `None` when its width and fraction are not given; an error when
    /// only one of them is.
    pub fn format(&self, kind: &str) -> Result<Option<FixedFormat>> {
        let i = KINDS.iter().position(|k| *k == kind).expect("a kind of KINDS");
        let k = &self.kinds[i];
        // Per-channel weights: the width with a placeholder fraction the channels replace.
        let frac = match (kind, self.weight_granularity) {
            ("weight", Granularity::PerChannel) => k.width.map(|_| 0),
            _ => k.frac,
        };
        match (k.width, frac) {
            (Some(width), Some(frac)) => Ok(Some(FixedFormat {
                signed: true,
                width,
                frac,
                rounding: k.rounding,
                overflow: k.overflow,
            })),
            (None, None) => Ok(None),
            (w, _) => Err(Error::Config(format!(
                "[{}.config] gives {kind}_{} but not {kind}_{}",
                self.key,
                if w.is_some() { "width" } else { "frac_width" },
                if w.is_some() { "frac_width" } else { "width" }
            ))),
        }
    }
}

/// A parsed quantize configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantConfig {
    /// How keys match nodes.
    pub by: MatchBy,
    /// The tables other than `default`, in key order.
    pub entries: Vec<EntryConfig>,
    /// `[default.config]`, if given.
    pub default: Option<EntryConfig>,
}

/// The `[passes.quantize]` table of a flow config.
pub fn quantize_table_from_flow(flow: &toml::Table) -> Result<toml::Table> {
    flow.get("passes")
        .and_then(|p| p.as_table())
        .and_then(|p| p.get("quantize"))
        .and_then(|q| q.as_table())
        .cloned()
        .ok_or_else(|| Error::Config("the flow config has no [passes.quantize] table".into()))
}

/// `name` of a table: fixed point or left in float.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
enum Repr {
    /// Fixed point.
    #[serde(rename = "integer")]
    Integer,
    /// Leave in float.
    #[serde(rename = "NA")]
    Na,
}

/// The fields of one `[<key>.config]` table as written; unknown fields are errors listing
/// these.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFields {
    name: Repr,
    #[serde(default, deserialize_with = "mode")]
    rounding: Option<Rounding>,
    #[serde(default, deserialize_with = "mode")]
    overflow: Option<Overflow>,
    data_in_width: Option<i64>,
    data_in_frac_width: Option<i64>,
    #[serde(default, deserialize_with = "mode")]
    data_in_rounding: Option<Rounding>,
    #[serde(default, deserialize_with = "mode")]
    data_in_overflow: Option<Overflow>,
    weight_width: Option<i64>,
    weight_frac_width: Option<i64>,
    weight_granularity: Option<Granularity>,
    #[serde(default, deserialize_with = "mode")]
    weight_rounding: Option<Rounding>,
    #[serde(default, deserialize_with = "mode")]
    weight_overflow: Option<Overflow>,
    bias_width: Option<i64>,
    bias_frac_width: Option<i64>,
    #[serde(default, deserialize_with = "mode")]
    bias_rounding: Option<Rounding>,
    #[serde(default, deserialize_with = "mode")]
    bias_overflow: Option<Overflow>,
    data_out_width: Option<i64>,
    data_out_frac_width: Option<i64>,
    #[serde(default, deserialize_with = "mode")]
    data_out_rounding: Option<Rounding>,
    #[serde(default, deserialize_with = "mode")]
    data_out_overflow: Option<Overflow>,
}

/// A rounding or overflow mode name as [`std::str::FromStr`] reads it (case-insensitive,
/// optional `AP_` prefix; the error lists the modes).
fn mode<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    Option::<String>::deserialize(d)?.map(|s| s.parse().map_err(serde::de::Error::custom)).transpose()
}

/// One kind's fields as written: width, fraction, rounding, overflow.
type KindFields = (Option<i64>, Option<i64>, Option<Rounding>, Option<Overflow>);

impl EntryFields {
    /// The fields of a kind of [`KINDS`].
    fn kind(&self, kind: &str) -> KindFields {
        match kind {
            "data_in" => {
                (self.data_in_width, self.data_in_frac_width, self.data_in_rounding, self.data_in_overflow)
            }
            "weight" => {
                (self.weight_width, self.weight_frac_width, self.weight_rounding, self.weight_overflow)
            }
            "bias" => (self.bias_width, self.bias_frac_width, self.bias_rounding, self.bias_overflow),
            _ => (
                self.data_out_width,
                self.data_out_frac_width,
                self.data_out_rounding,
                self.data_out_overflow,
            ),
        }
    }
}

fn parse_entry(key: &str, table: &toml::Value) -> Result<EntryConfig> {
    let t = table.as_table().ok_or_else(|| {
        Error::Config(format!("'{key}' must be a table with a 'config' sub-table, e.g. [{key}.config]"))
    })?;
    if let Some(other) = t.keys().find(|k| k.as_str() != "config") {
        return Err(Error::Config(format!("[{key}] has '{other}'; only [{key}.config] is read")));
    }
    let cfg = t
        .get("config")
        .and_then(|c| c.as_table())
        .ok_or_else(|| Error::Config(format!("'{key}' has no [{key}.config] table")))?;
    let fields: EntryFields = crate::pass::typed(cfg, &format!("[{key}.config]"))?;
    let mut kinds = [KindConfig::default(); 4];
    for (i, kind) in KINDS.iter().enumerate() {
        let kc = &mut kinds[i];
        let (width, frac, rounding, overflow) = fields.kind(kind);
        kc.rounding = rounding.or(fields.rounding).unwrap_or(if matches!(*kind, "weight" | "bias") {
            Rounding::RndConv
        } else {
            Rounding::Trn
        });
        kc.overflow = overflow.or(fields.overflow).unwrap_or(Overflow::Sat);
        if let Some(w) = width {
            if !(1..=64).contains(&w) {
                return Err(Error::Config(format!(
                    "[{key}.config] {kind}_width = {w}: widths must be 1..=64"
                )));
            }
            kc.width = Some(w as u32);
        }
        if let Some(f) = frac {
            let lim = crate::fixed::MAX_FRAC_MAGNITUDE as i64;
            if !(-lim..=lim).contains(&f) {
                return Err(Error::Config(format!(
                    "[{key}.config] {kind}_frac_width = {f}: must be within ±{lim}"
                )));
            }
            kc.frac = Some(f as i32);
        }
    }
    let weight_granularity = fields.weight_granularity.unwrap_or_default();
    if weight_granularity == Granularity::PerChannel && fields.weight_frac_width.is_some() {
        return Err(Error::Config(format!(
            "[{key}.config] weight_granularity = \"per_channel\" chooses each output channel's fraction from its \
             range; give weight_width without weight_frac_width"
        )));
    }
    let e = EntryConfig {
        key: key.to_string(),
        integer: fields.name == Repr::Integer,
        kinds,
        weight_granularity,
    };
    for k in KINDS {
        if let Some(f) = e.format(k)? {
            f.validate().map_err(|m| Error::Config(format!("[{key}.config] {k}: {m}")))?;
        }
    }
    Ok(e)
}

/// Parses a quantize configuration (the pass's TOML table).
pub fn parse(table: &toml::Table) -> Result<QuantConfig> {
    let by = match table.get("by") {
        None => MatchBy::Type,
        Some(v) => v.clone().try_into().map_err(|e: toml::de::Error| {
            Error::Config(format!("by = {v}: {} (\"type\": mase op, \"name\": node name, \"regex_name\": regex over node names)", e.to_string().trim_end()))
        })?,
    };
    let mut entries = Vec::new();
    let mut default = None;
    for (k, v) in table {
        if k == "by" {
            continue;
        }
        let e = parse_entry(k, v)?;
        if k == "default" {
            default = Some(e);
        } else {
            entries.push(e);
        }
    }
    Ok(QuantConfig { by, entries, default })
}

/// Edit distance, for suggesting node names.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Up to five node names closest to `key`.
fn closest(graph: &MaseGraph, key: &str) -> Vec<String> {
    let mut names: Vec<(usize, String)> =
        graph.nodes().map(|(_, n)| (levenshtein(key, &n.name), n.name.clone())).collect();
    names.sort();
    names.into_iter().take(5).map(|(_, n)| n).collect()
}

/// Which table (index into `entries`) each node matches, checking the keys.
fn match_nodes(
    graph: &MaseGraph,
    cfg: &QuantConfig,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<NodeId, usize>> {
    let mut m = BTreeMap::new();
    match cfg.by {
        MatchBy::Type => {
            for (i, e) in cfg.entries.iter().enumerate() {
                let mase_ops = crate::op::OpKind::mase_ops();
                if !mase_ops.contains(&e.key.as_str()) {
                    return Err(Error::Config(format!(
                        "[{}.config]: '{}' is not a mase op (by = \"type\"); mase ops are: {}",
                        e.key,
                        e.key,
                        mase_ops.join(", ")
                    )));
                }
                let hits: Vec<NodeId> =
                    graph.nodes().filter(|(_, n)| n.op.mase_op() == e.key).map(|(id, _)| id).collect();
                if hits.is_empty() {
                    warnings.push(format!(
                        "warning: [{}.config]: no node of type '{}' in the graph",
                        e.key, e.key
                    ));
                }
                for id in hits {
                    m.insert(id, i);
                }
            }
        }
        MatchBy::Name => {
            for (i, e) in cfg.entries.iter().enumerate() {
                let id = graph.find(&e.key).ok_or_else(|| {
                    Error::Config(format!(
                        "[{}.config]: no node is named '{}' (by = \"name\"); closest names: {}",
                        e.key,
                        e.key,
                        closest(graph, &e.key).join(", ")
                    ))
                })?;
                m.insert(id, i);
            }
        }
        MatchBy::RegexName => {
            for (i, e) in cfg.entries.iter().enumerate() {
                let re = regex::Regex::new(&format!("^(?:{})$", e.key))
                    .map_err(|err| Error::Config(format!("[\"{}\".config]: invalid regex: {err}", e.key)))?;
                let mut any = false;
                for (id, n) in graph.nodes() {
                    if re.is_match(&n.name) {
                        any = true;
                        if let Some(prev) = m.insert(id, i) {
                            return Err(Error::Config(format!(
                                "node '{}' is matched by two regexes, '{}' and '{}'; make them disjoint",
                                n.name, cfg.entries[prev].key, e.key
                            )));
                        }
                    }
                }
                if !any {
                    return Err(Error::Config(format!(
                        "[\"{}\".config]: the regex matches no node name (whole-name match); closest names: {}",
                        e.key,
                        closest(graph, &e.key).join(", ")
                    )));
                }
            }
        }
    }
    Ok(m)
}

/// The formats an `integer` table gives a node; errors name the node, the table and the
/// missing field.
fn node_formats(graph: &MaseGraph, id: NodeId, e: &EntryConfig) -> Result<NodeFormats> {
    let node = graph.node(id);
    let need = |kind: &str| -> Result<FixedFormat> {
        e.format(kind)?.ok_or_else(|| {
            let what = if kind == "weight" && e.weight_granularity == Granularity::PerChannel {
                "weight_width (per-channel weights choose their fractions)".to_string()
            } else {
                format!("{kind}_width and {kind}_frac_width")
            };
            node.error(format!("[{}.config] must give {what} for this node", e.key))
        })
    };
    let mut f = NodeFormats::default();
    let mut first_in = None;
    for (k, i) in node.inputs.iter().enumerate() {
        let float_in = node.meta.common.args.get(&format!("data_in_{k}")).is_some_and(|a| a.ty.is_real())
            && has_float_result(graph, *i);
        if float_in {
            let fmt = need("data_in")?;
            first_in.get_or_insert(fmt);
            f.data_in.push(Some(fmt));
        } else {
            f.data_in.push(None);
        }
    }
    for (role, _) in node.op.weight_names() {
        match role {
            "weight" => {
                f.weight = Some(need("weight")?);
                f.weight_granularity = e.weight_granularity;
            }
            "bias" => f.bias = Some(need("bias")?),
            _ => {}
        }
    }
    if has_float_result(graph, id) {
        f.data_out = match (e.format("data_out")?, first_in) {
            (Some(o), _) => Some(o),
            (None, Some(i)) => {
                let k = &e.kinds[3];
                Some(FixedFormat { rounding: k.rounding, overflow: k.overflow, ..i })
            }
            (None, None) => Some(need("data_out")?),
        };
    }
    Ok(f)
}

/// Nodes a table set to "NA": (node name, table key).
pub type NaNodes = Vec<(String, String)>;

/// Builds the plan a configuration gives a graph. Returns the plan, warnings, and the nodes
/// a table set to "NA".
pub fn build_plan(graph: &MaseGraph, cfg: &QuantConfig) -> Result<(Plan, Vec<String>, NaNodes)> {
    let mut warnings = Vec::new();
    let matches = match_nodes(graph, cfg, &mut warnings)?;
    let mut plan = Plan::new();
    let mut na = Vec::new();
    for (id, n) in graph.nodes() {
        let entry = match matches.get(&id) {
            Some(&i) => &cfg.entries[i],
            None => {
                let compute = matches!(
                    n.meta.common.mase_type,
                    MaseType::Module | MaseType::ModuleRelatedFunc | MaseType::BuiltinFunc
                );
                match &cfg.default {
                    Some(d) if compute && has_float_result(graph, id) => d,
                    _ => continue,
                }
            }
        };
        if !entry.integer {
            na.push((n.name.clone(), entry.key.clone()));
            continue;
        }
        plan.insert(id, node_formats(graph, id, entry)?);
    }
    Ok((plan, warnings, na))
}
