"""Run configuration: typed, frozen dataclasses loaded from YAML and validated.

Every key has a default; an unknown key, a wrong type or an out-of-range value raises
ConfigError naming the key and the file (or ``--set``). Nested keys are written with dots,
as in ``--set optimizer.lr=0.05``. ``schema`` holds the sections, ``parse`` the checks and
``--set`` overrides, ``yaml_file`` reading and writing config files, ``bounded_yaml`` the
limits on what a YAML document may hold, ``memory`` the estimate that refuses a run too large
for the machine.
"""

from ..errors import ConfigError
from .parse import config_from_dict, parse_override
from .schema import (
                     DATASET_NAMES,
                     LOSS_NAMES,
                     OPTIMIZER_NAMES,
                     SCHEDULE_NAMES,
                     Config,
                     DataConfig,
                     DiagnosticsConfig,
                     EarlyStoppingConfig,
                     ModelConfig,
                     OptimizerConfig,
                     ScheduleConfig,
                     TrainingConfig,
)
from .yaml_file import config_to_dict, dump_config, load_config, with_absolute_paths

__all__ = ["DATASET_NAMES", "LOSS_NAMES", "OPTIMIZER_NAMES", "SCHEDULE_NAMES", "Config", "ConfigError",
           "DataConfig", "DiagnosticsConfig", "EarlyStoppingConfig", "ModelConfig", "OptimizerConfig",
           "ScheduleConfig", "TrainingConfig", "config_from_dict", "config_to_dict", "dump_config",
           "load_config", "parse_override", "with_absolute_paths"]
