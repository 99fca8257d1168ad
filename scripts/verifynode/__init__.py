"""The node fixture harness behind ``scripts/verify-node.py`` (DESIGN §11; format in ``tests/nodes/README.md``)."""
