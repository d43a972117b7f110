"""The loop: the Agent (one step per run()), its start-up, the step, failures, the guardrail."""
