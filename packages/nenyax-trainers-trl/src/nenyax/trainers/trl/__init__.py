"""Any Nenyax environment inside TRL's GRPOTrainer, played by the trainer's own model: `NenyaxSpec`."""

from nenyax.trainers.trl._version import __version__
from nenyax.trainers.trl.spec import NenyaxSpec

__all__ = ["NenyaxSpec", "__version__"]
