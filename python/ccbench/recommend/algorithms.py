"""The candidates' names as recommend prints them, and their order when nothing else decides."""

from __future__ import annotations

from ..scenario.model import UNMODELLED_ALGORITHMS

#: order of the candidates when nothing else decides (ties in the tables)
ORDER = {"cubic": 0, "bbr": 1, "reno": 2, "vegas": 3}
#: printed names; ``bbr`` is BBR v1 (mainline Linux's tcp_bbr.c), in every output
NAMES = {"cubic": "CUBIC", "bbr": "BBR v1", "reno": "Reno", "vegas": "Vegas"}
#: the names of algorithms only ns-3 runs, as their authors write them
NS3_NAMES = {
    "westwood": "Westwood",
    "highspeed": "HighSpeed",
    "hybla": "Hybla",
    "illinois": "Illinois",
    "scalable": "Scalable",
    "yeah": "YeAH",
    "htcp": "H-TCP",
    "bic": "BIC",
    "veno": "Veno",
    "lp": "TCP-LP",
    "dctcp": "DCTCP",
    "ledbat": "LEDBAT",
}
#: names of BBR versions recommend does not search (refused with UNMODELLED_TEXT, not matched to
#: ``bbr``): v2, which no backend models, and v3, which only the simulator runs (``bbr3``)
UNMODELLED_BBR = (*UNMODELLED_ALGORITHMS, "bbr3")
UNMODELLED_TEXT = "not a recommend candidate; `bbr` is BBR v1 (scenarios run BBR v3 as `bbr3` on the sim backend)"


def cc_name(cc: str) -> str:
    return NAMES.get(cc) or NS3_NAMES.get(cc, cc)
