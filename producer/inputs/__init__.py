"""Reading problems and samples: each benchmark's file format has its one reader here, which builds that kind's
tests (protocol/models.py), and every input is checked whole before anything is stored (files.py)."""
