; The `@split blocks` convention every kernel's manifest declares (the runner
; checks each core's share against it): the tensor is a flat run of 32-byte
; C0 blocks, B of them, and core k of n takes blocks
; [k*ceil(B/n), min((k+1)*ceil(B/n), B)).
;
; SPLIT_BLOCKS done: s25 = this core's first byte, s20 = its bytes,
; s17 = bytes per element; branches to `done` when the core has no blocks
; (more cores than blocks). Clobbers s16, s18, s19.
.macro SPLIT_BLOCKS done
    srd     s16, elems
    srd     s17, esize
    mul     s16, s16, s17           ; tensor bytes
    srli    s16, s16, 5             ; C0 blocks
    srd     s18, ncores
    add     s19, s16, s18
    addi    s19, s19, -1
    divu    s19, s19, s18           ; blocks per core, rounded up
    srd     s25, coreid
    mul     s25, s25, s19           ; first block of this core
    add     s20, s25, s19
    min     s20, s20, s16           ; end block of this core
    bge     s25, s20, \done         ; no work for this core
    sub     s20, s20, s25
    slli    s20, s20, 5             ; bytes for this core
    slli    s25, s25, 5
.endm

; SPLIT_TILE out, left, prev, tmax, vlenb, t1, t2: the bytes of a core's
; tile that starts with `left` bytes of its share left, after a tile of
; `prev` bytes: as large as the tile size `tmax` allows, but at most twice
; the previous tile (a core's tiles grow from MIN = min(128 vectors, tmax),
; so its first compute starts after a short load) and never leaving less
; than MIN for the core's last tile (which nothing overlaps: its compute and
; store are short). Where MIN is tmax (2048-bit vectors) every tile is as
; large as it may be. left, tmax and 128 vectors are whole C0 blocks, and so
; is out. t1, t2: temporaries (not out, left or prev). Measured in
; docs/kernels.md ("Efficiency on every config").
.macro SPLIT_TILE out, left, prev, tmax, vlenb, t1, t2
    slli    \t2, \vlenb, 7
    min     \t2, \t2, \tmax           ; MIN
    sub     \t1, \left, \t2
    max     \t1, \t1, \t2             ; what is left but the last tile, at least MIN
    slli    \out, \prev, 1
    min     \out, \out, \t1
    min     \out, \out, \tmax
    min     \out, \out, \left
.endm

; DMA_CHUNK (the host's, where the L2 MSHRs pace the reads: their reach)
; is the size of the pieces a skeleton sends its tiles' transfers in
; (lib/perchan.s, lib/eltwise.s): whole C0 blocks of a 256-byte step.
.ifdef DMA_CHUNK
.if DMA_CHUNK / 256 * 256 != DMA_CHUNK
.error "DMA_CHUNK: the host gives a multiple of 256 bytes (the MSHRs' reach)"
.endif
.if DMA_CHUNK < 256
.error "DMA_CHUNK: the host gives a multiple of 256 bytes (the MSHRs' reach)"
.endif
.endif
