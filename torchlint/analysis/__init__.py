"""Layer 2, analysis: what a module means, knowing nothing of rules.  The semantic model
(scopes, bindings, imports), the inference (what is a tensor, and the evidence), the
project (other modules of the user's code, analysed on demand), and the torch facts.
``module.ModuleAnalysis`` is one analysed module.  Imports only the syntax layer."""
