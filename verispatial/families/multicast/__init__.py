"""Multicast (docs/semantics.md, "Asynchronous NoC", the ``mcast-*`` rules, and "Acknowledgement counts"): McastSend
and McastSetValid, their leaving the source and landing at each destination, the receiver's slot and the pages it
publishes only after they landed."""
