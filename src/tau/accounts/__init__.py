"""tau.accounts: logins and the models they open.

Credentials (``auth_storage``) and the OAuth flows that fill it (``oauth``), the user's
``models.json`` (``models_config``, ``models_store``), the model registry that joins both with the
catalogue (``model_registry``, ``account_models``), ``--model`` resolution (``model_resolver``) and
the Vertex login check (``vertex_login``). One package, as credentials and models use each other.
"""
