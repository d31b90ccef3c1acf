// Two accelerators in MAESTRO's hardware syntax (XRBench hw_configs layout).
Accelerator Acc0 { num_pes: 1024  offchip_bw: 64  global_shared_memory: 1048576 }
Accelerator Acc1 { num_pes: 256  offchip_bw: 64  global_shared_memory: 524288 }
