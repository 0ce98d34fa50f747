"""The emulator's refusal, shared by the plan and the workload below it."""


class PlanError(ValueError):
    """The scenario cannot be emulated as asked (message names the field and the limit)."""
