"""What the producer and the worker speak, and neither owns: the models that cross a process or the network
(models.py, result.py), the settings both read (settings.py), and the name of every Redis key (keys.py)."""
