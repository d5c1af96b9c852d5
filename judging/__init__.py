"""Judging: how two bug reports are compared, and how far the comparison can be trusted.

``judging.judges`` holds the judge backends (simulated, OpenAI-protocol,
command), the prompt, and the call contract every call goes through (deadline,
retries, circuit breaker, answer parsing; an outage is a failure to judge,
never a verdict). ``judging.bias`` holds the judging strategies, the simulated
judge's model, and the bias probes (position, verbosity, self-preference).

The layer sits above the kernel (``bughunt``) and below the stages: the score
stage and ``bughunt probe`` both use it. It never touches the ledger; a
stage hands it the cache lookup (:data:`judging.judges.CallLookup`).
"""
