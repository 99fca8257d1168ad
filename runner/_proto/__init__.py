"""Generated from proto/workflow.proto by scripts/gen_protos.py. Do not edit."""
