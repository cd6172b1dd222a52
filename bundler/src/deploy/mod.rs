//! Getting an operator onto a cluster: OLM install manifests and the install flows.
