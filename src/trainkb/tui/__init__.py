"""The Textual app behind `kb` / `kb tui`. Imported only when a terminal UI is wanted."""

from ._app import TrainKBApp
from ._model import KnowledgeBase

__all__ = ["KnowledgeBase", "TrainKBApp"]
