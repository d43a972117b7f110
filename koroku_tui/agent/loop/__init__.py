"""The loop: the Agent (one step per run()), its conversation, the tool step, the guardrail."""
