"""The checks: deadlock freedom (static and dynamic), tag uniqueness across launches and
steps, visibility of flagged data, the role rule, and the mutation catalogue they are
tested against. Every check returns :class:`~kda_sim.checks.findings.Finding` objects
whose messages name the CTA, stage, region, index and tag involved and the fix."""
