"""The candidates' names as recommend prints them, and their order when nothing else decides."""

from __future__ import annotations

from ..scenario.model import UNMODELLED_ALGORITHMS

#: the default candidates, in their order when nothing else decides (ties in the tables); those a
#: backend cannot run are left out, and DCTCP and Prague only count where the bottleneck marks ECN
ORDER = {"cubic": 0, "bbr": 1, "bbr3": 2, "reno": 3, "vegas": 4, "dctcp": 5, "prague": 6}
#: printed names; ``bbr`` is BBR v1 (mainline Linux's tcp_bbr.c), ``bbr3`` BBR v3 (google/bbr v3)
NAMES = {
    "cubic": "CUBIC",
    "bbr": "BBR v1",
    "bbr3": "BBR v3",
    "reno": "Reno",
    "vegas": "Vegas",
    "dctcp": "DCTCP",
    "prague": "Prague",
}
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
#: names of BBR versions no backend models (refused with their UNMODELLED_ALGORITHMS text, not
#: matched to ``bbr``)
UNMODELLED_BBR = tuple(UNMODELLED_ALGORITHMS)


def unmodelled_text(cc: str) -> str:
    return UNMODELLED_ALGORITHMS.get(cc, "not modelled")


def cc_name(cc: str) -> str:
    return NAMES.get(cc) or NS3_NAMES.get(cc, cc)
