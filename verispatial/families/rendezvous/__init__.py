"""The rendezvous (docs/semantics.md, "Rendezvous"): in a program of several sections, no engine executes an op of a
section after a closing boundary before every engine arrived at it (``rendezvous-early``; the boundaries are
``ir/boundaries.py``'s, the one definition the checker's ``hb-rendezvous`` shares). The family has no op class of its
own: the rule is checked before every engine step (``semantics.py``). The checker decides the compose rendezvous in
``certify/compositional.py`` (``rendezvous``, ``rendezvous-early``) and ``hb-rendezvous`` among the happens-before
queries (``families/tensors/ordering_encoding.py``); the Promela export refuses programs of several sections by
name (``petri/promela.py``)."""
