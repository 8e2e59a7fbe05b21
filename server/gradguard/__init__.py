"""GradGuard: finds PyTorch autograd graph-lifetime bugs before the code runs."""
from .analysis import Analysis, analyze_cells, analyze_path, analyze_source
from .sources import SourceError

__all__ = ["Analysis", "SourceError", "analyze_cells", "analyze_path", "analyze_source"]
__version__ = "0.1.0"
