"""Human cases: the AI delegates a task to a back-office human (specs/human-cases.md)."""
