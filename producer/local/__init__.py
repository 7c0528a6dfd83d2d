"""One machine's defaults: the private Valkey (valkey.py), kept up; the local workers (workers.py) and the warm
ones kept between commands (resident.py); where a command's Redis comes from (backend.py); the problem sets'
environments built here (venvs.py)."""
