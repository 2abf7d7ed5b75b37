"""Built-in studies: the seed documents' questions as runnable, reportable experiments
(docs/studies.md). Published numbers are never used to set up a scenario: the comparison is the
output.

- ``spec``: the study file and the built-in studies (studies/*.toml);
- ``run``: sweeping every part into one store, and the study's report;
- ``data``: a part's runs and a cell's rows; ``published``: the seed's numbers beside ours;
- ``analyses``: the report sections a study lists, ``recommendation_map`` one of them.
"""

from .analyses import ANALYSES, probe_rtt_rounds, report_sections
from .data import PartData, match_cell
from .published import Measured, measure, per_run, published_table, verdict
from .recommendation_map import map_section
from .run import StudyRun, build_report, check_backend, default_out, run_study, write_study_meta
from .spec import (
    ANALYSIS_NAMES,
    BUILTIN_DIR,
    METRICS,
    Part,
    Published,
    Study,
    StudyError,
    builtin_studies,
    find_study,
    list_studies,
    load_study,
    study_from_dict,
)

__all__ = [
    "StudyError",
    "Study",
    "Part",
    "Published",
    "METRICS",
    "ANALYSES",
    "ANALYSIS_NAMES",
    "BUILTIN_DIR",
    "builtin_studies",
    "list_studies",
    "find_study",
    "load_study",
    "study_from_dict",
    "run_study",
    "default_out",
    "published_table",
    "report_sections",
    "build_report",
    "StudyRun",
    "check_backend",
    "write_study_meta",
    "PartData",
    "match_cell",
    "probe_rtt_rounds",
    "map_section",
    "Measured",
    "measure",
    "per_run",
    "verdict",
]
