"""The site's own Sphinx extension (listed in ``_config.yml``: ``sphinx: local_extensions``).

* Sets ``GPUPERF_EXPLORERS=static`` as soon as Sphinx loads it, before any notebook executes, so every
  ``gpuperf.explorers`` call in a book build emits its precomputed, self-contained figure (the kernels
  Jupyter Book starts inherit the variable).
"""

from __future__ import annotations

import os

EXPLORER_MODE_ENV = "GPUPERF_EXPLORERS"


def setup(app):
    os.environ[EXPLORER_MODE_ENV] = "static"
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
