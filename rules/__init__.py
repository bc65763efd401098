"""torchlint's rules, one module each. Every ``Rule`` subclass defined here is registered."""
