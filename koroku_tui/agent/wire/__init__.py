"""The Gemini wire: client, request and streaming, retry, errors, credentials, redaction."""
