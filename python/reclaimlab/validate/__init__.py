"""``reclaimlab validate``: the same workload on a real Debian 6.1 kernel in a QEMU guest and in
the simulator, side by side.

One module per concern, each layer importing only those below it (pyproject's `validate`
contract): :mod:`.report` renders, :mod:`.compare` sets the kept real results beside simulator
runs, :mod:`.store` keeps and remakes the real results, :mod:`.guest` boots QEMU and parses the
serial console, :mod:`.initramfs` builds the guest's root, :mod:`.kernel` fetches the kernel
package and builds the workload program (``workload.c``), :mod:`.spec` turns a scenario into
what the guest runs. The free page reporting run (``--balloon``) has its own: :mod:`.balloon`
(the guest with a virtio-balloon device, ``balloon.c``, the host's RSS sampling, its kept
results), :mod:`.rss` (returned bytes, time to half and to 90 %) and :mod:`.balloon_compare`.
docs/VALIDATION.md describes it all.
"""
