"""The result schema shared by every backend (docs/results.md): the fixed Arrow schemas of the
`flows`, `runs`, `series`, `link_series` and `counters` tables, the MIB counter names, and the
two ways out of a table: pandas frames with one dtype per column whatever the backend
(:func:`to_frame`) and JSON rows with NaN / inf as null (:func:`json_rows`, :func:`clean`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: the tables of a run (a store writes ``runs`` last: the commit marker)
TABLES = ("runs", "flows", "series", "link_series", "counters")

# Columns that describe the scenario; repeated in `flows` and `runs` so either table can be
# grouped by the conditions without a join.
DESCRIPTOR_FIELDS = [
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("scenario_hash", pa.string(), nullable=False),
    pa.field("backend", pa.string(), nullable=False),
    pa.field("name", pa.string()),
    pa.field("rate_mbps", pa.float64()),
    pa.field("rtt_ms", pa.float64()),  # bottleneck.rtt as configured
    pa.field("base_rtt_ms", pa.float64()),  # including access delays
    pa.field("jitter_ms", pa.float64()),
    pa.field("jitter_dist", pa.string()),
    pa.field("loss_model", pa.string()),
    pa.field("loss_pct", pa.float64()),  # long-run loss rate of the model, in %
    pa.field("impair", pa.string()),
    pa.field("buffer_bytes", pa.int64()),  # bytes, or packets × 1500 for packet buffers
    pa.field("buffer_packets", pa.int64()),  # only for buffers given in packets
    pa.field("buffer_bdp", pa.float64()),  # buffer / BDP
    pa.field("aqm", pa.string()),
    pa.field("aqm_params", pa.string()),  # JSON: every parameter of the discipline, defaults filled in
    pa.field("access_rate_mbps", pa.float64()),
    pa.field("access_delay_ms", pa.float64()),
    pa.field("n_flows", pa.int64()),
    pa.field("duration_s", pa.float64()),
    pa.field("seed", pa.uint64()),
    pa.field("ccbench_version", pa.string()),
]


FLOWS_SCHEMA = pa.schema(
    DESCRIPTOR_FIELDS
    + [
        pa.field("flow_id", pa.int64(), nullable=False),
        pa.field("group", pa.int64()),
        pa.field("cc", pa.string()),
        pa.field("cc_impl", pa.string()),  # kernel backend: "builtin" module or our "bpf" port
        pa.field("direction", pa.string()),  # "forward" | "reverse", from the scenario
        pa.field("goodput_bps", pa.float64()),
        pa.field("bytes_acked", pa.int64()),
        pa.field("retransmits", pa.int64()),
        pa.field("loss_events", pa.int64()),
        pa.field("rtt_min_ms", pa.float64()),
        pa.field("rtt_mean_ms", pa.float64()),
        pa.field("rtt_p50_ms", pa.float64()),
        pa.field("rtt_p95_ms", pa.float64()),
        pa.field("rtt_p99_ms", pa.float64()),
        pa.field("cwnd_mean", pa.float64()),
        pa.field("start_s", pa.float64()),
        pa.field("end_s", pa.float64()),
        pa.field("fct_s", pa.float64()),
        pa.field("completed", pa.bool_()),
        pa.field("size_bytes", pa.int64()),
        pa.field("rwnd_bytes", pa.int64()),
        pa.field("data_sent", pa.int64()),
        pa.field("data_received", pa.int64()),
        pa.field("data_dropped", pa.int64()),
        pa.field("data_in_network", pa.int64()),
    ]
)


RUNS_SCHEMA = pa.schema(
    DESCRIPTOR_FIELDS
    + [
        pa.field("status", pa.string(), nullable=False),  # "ok" | "failed"
        pa.field("error", pa.string()),
        pa.field("link_utilisation", pa.float64()),
        pa.field("drops", pa.int64()),
        pa.field("ce_marked", pa.int64()),
        pa.field("random_losses", pa.int64()),
        pa.field("aggregate_goodput_bps", pa.float64()),
        pa.field("jain_index", pa.float64()),
        pa.field("jain_index_groups", pa.float64()),
        pa.field("probe_rtt_p50_ms", pa.float64()),
        pa.field("probe_rtt_p95_ms", pa.float64()),
        pa.field("probe_rtt_p99_ms", pa.float64()),
        # time packets waited in the forward bottleneck queue (arrival to start of transmission)
        pa.field("sojourn_p50_ms", pa.float64()),
        pa.field("sojourn_p95_ms", pa.float64()),
        pa.field("sojourn_p99_ms", pa.float64()),
        # the Wi-Fi hop (bottleneck.link = "wifi"; null on a wire): A-MPDU sizes, transmit
        # opportunities and airtime share per station, collisions, retries (docs/results.md)
        pa.field("wifi_ampdu_mean_fwd", pa.float64()),
        pa.field("wifi_ampdu_p50_fwd", pa.float64()),
        pa.field("wifi_ampdu_p90_fwd", pa.float64()),
        pa.field("wifi_ampdu_mean_rev", pa.float64()),
        pa.field("wifi_ampdu_p50_rev", pa.float64()),
        pa.field("wifi_ampdu_p90_rev", pa.float64()),
        pa.field("wifi_txops_fwd", pa.int64()),
        pa.field("wifi_txops_rev", pa.int64()),
        pa.field("wifi_airtime_fwd", pa.float64()),
        pa.field("wifi_airtime_rev", pa.float64()),
        pa.field("wifi_collisions", pa.int64()),
        pa.field("wifi_mpdus_retried", pa.int64()),
        pa.field("wifi_retry_drops", pa.int64()),
        pa.field("events", pa.int64()),  # simulator only
        pa.field("data_packets", pa.int64()),  # simulator only
        pa.field("kernel_version", pa.string()),  # kernel backend only
        # kernel backend only: how faithfully the run kept the scenario's timing (docs/results.md)
        pa.field("emulator_late_p99_us", pa.float64()),
        pa.field("host_steal_pct", pa.float64()),
        pa.field("wall_time_s", pa.float64()),
    ]
)


SERIES_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("flow_id", pa.int64(), nullable=False),
        pa.field("group", pa.int64()),  # from the scenario's expanded flows
        pa.field("cc", pa.string()),
        pa.field("t_s", pa.float64(), nullable=False),
        pa.field("goodput_bps", pa.float64()),
        pa.field("cwnd_pkts", pa.int64()),
        pa.field("rtt_ms", pa.float64()),
        pa.field("pacing_bps", pa.float64()),
        pa.field("inflight_pkts", pa.int64()),
        pa.field("cc_state", pa.string()),
        pa.field("bw_est_bps", pa.float64()),
        pa.field("min_rtt_ms", pa.float64()),
        pa.field("delivery_rate_bps", pa.float64()),  # tcpi_delivery_rate × 8 (payload)
        pa.field("retransmits", pa.int64()),  # cumulative, tcpi_total_retrans
    ]
)


# One row per bottleneck sample (the same instants as `series`, also before any flow starts).
LINK_SERIES_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("t_s", pa.float64(), nullable=False),
        pa.field("queue_bytes", pa.int64()),  # forward bottleneck queue
        pa.field("probe_rtt_ms", pa.float64()),  # latest probe reply in the interval, else null
        pa.field("sojourn_ms", pa.float64()),  # mean sojourn of packets sent in the interval, else null
        pa.field("probe_rtt_p50_ms", pa.float64()),  # percentiles of the replies in the interval, else null
        pa.field("probe_rtt_p95_ms", pa.float64()),
    ]
)


#: TCP MIB counters, named as ``nstat`` names them (Tcp* from /proc/net/snmp, TcpExt* from
#: /proc/net/netstat). The one list: the kernel backend reads these, the simulator's report
#: (crates/sim/src/report/mod.rs) uses the same keys, docs/results.md says what each counts.
COUNTER_NAMES = (
    "TcpRetransSegs",
    "TcpOutSegs",
    "TcpInSegs",
    "TcpExtTCPLossProbes",
    "TcpExtTCPLossProbeRecovery",
    "TcpExtTCPSACKReorder",
    "TcpExtTCPDSACKRecv",
    "TcpExtTCPDSACKOldSent",
    "TcpExtTCPDSACKOfoSent",
    "TcpExtTCPDSACKUndo",
    "TcpExtTCPFullUndo",
    "TcpExtTCPPartialUndo",
    "TcpExtTCPLossUndo",
    "TcpExtTCPSpuriousRTOs",
    "TcpExtTCPTimeouts",
    "TcpExtTCPFastRetrans",
    "TcpExtTCPLostRetransmit",
    "TcpExtTCPSackRecovery",
    "TcpExtPAWSEstab",
    "TcpExtTCPOFOQueue",
    "TcpExtTCPOFODrop",
    "TcpExtDelayedACKs",
    # CUBIC's HyStart: which test ended slow start, and at what cwnd (summed over exits)
    "TcpExtTCPHystartTrainDetect",
    "TcpExtTCPHystartTrainCwnd",
    "TcpExtTCPHystartDelayDetect",
    "TcpExtTCPHystartDelayCwnd",
    # ECN: segments delivered by ACKs that carried ECE
    "TcpExtTCPDeliveredCE",
    "IpExtInCEPkts",
)


#: The ``side`` values of the counters table: the sending hosts and the receiving hosts.
COUNTER_SIDES = ("sender", "receiver")


# One row per run per side: the change of each MIB counter over the run, summed over every
# connection of that side (the kernel's counters are per network namespace).
COUNTERS_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("side", pa.string(), nullable=False),  # "sender" | "receiver"
    ]
    + [pa.field(n, pa.int64()) for n in COUNTER_NAMES]
)


RUN_EXTRA_KEYS = {
    "link_utilisation",
    "drops",
    "ce_marked",
    "random_losses",
    "aggregate_goodput_bps",
    "probe_rtt_p50_ms",
    "probe_rtt_p95_ms",
    "probe_rtt_p99_ms",
    "sojourn_p50_ms",
    "sojourn_p95_ms",
    "sojourn_p99_ms",
    "events",
    "data_packets",
    "kernel_version",
    "emulator_late_p99_us",
    "host_steal_pct",
}


#: The Wi-Fi hop's run columns (null on a wire).
WIFI_RUN_KEYS = (
    "wifi_ampdu_mean_fwd",
    "wifi_ampdu_p50_fwd",
    "wifi_ampdu_p90_fwd",
    "wifi_ampdu_mean_rev",
    "wifi_ampdu_p50_rev",
    "wifi_ampdu_p90_rev",
    "wifi_txops_fwd",
    "wifi_txops_rev",
    "wifi_airtime_fwd",
    "wifi_airtime_rev",
    "wifi_collisions",
    "wifi_mpdus_retried",
    "wifi_retry_drops",
)
RUN_EXTRA_KEYS |= set(WIFI_RUN_KEYS)


def ccbench_version() -> str:
    from .. import __version__

    return __version__


def json_safe(v: Any) -> Any:
    """A value JSON can hold exactly, for every document ccbench writes: NaN / inf → None (JSON and
    Parquet get null, never a made-up number), numpy scalars → Python numbers, dicts (with string
    keys) and lists cleaned all the way down. The one cleaner: results, compare.json, recommend."""
    if isinstance(v, dict):
        return {str(k): json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_safe(x) for x in v]
    if hasattr(v, "item") and not isinstance(v, (str, bytes)) and getattr(v, "ndim", 0) == 0:
        v = v.item()  # a numpy scalar
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


def clean_array(arr: pa.Array) -> pa.Array:
    """NaN / ±inf → null in a float column (:func:`json_safe` for a whole column)."""
    if pa.types.is_floating(arr.type) and len(arr) and not pc.all(pc.is_finite(arr)).as_py():
        arr = pc.if_else(pc.is_finite(arr), arr, pa.nulls(1, arr.type)[0])
    return arr


def json_rows(table: pa.Table) -> list[dict[str, Any]]:
    """The rows of a table as dicts, NaN / inf → None (:func:`json_safe`, column by column)."""
    cols = [clean_array(c.combine_chunks()) for c in table.columns]
    return pa.Table.from_arrays(cols, names=table.column_names).to_pylist()


def _nullable_dtype(t: pa.DataType):
    """pandas dtype for an Arrow type: integers and booleans become pandas' nullable dtypes, so
    a column a backend leaves null keeps its integer type (instead of turning into float64)
    and the same column has the same dtype whichever backend filled it."""
    import pandas as pd

    if pa.types.is_integer(t):
        return pd.api.types.pandas_dtype(str(t).replace("int", "Int").replace("uInt", "UInt"))
    if pa.types.is_boolean(t):
        return pd.BooleanDtype()
    return None


def to_frame(table: pa.Table) -> "pd.DataFrame":
    """An Arrow table as a DataFrame with the same dtypes for every backend."""
    return table.to_pandas(types_mapper=_nullable_dtype)
