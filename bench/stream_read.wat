;; Single-core wasm read bandwidth: run(bytes) reads bytes (a multiple of 128) of this
;; module's memory from address 0 as f32x4 vectors into 8 independent sums, 128 bytes per
;; loop iteration, and returns a lane of their sum so the reads cannot be dropped. The
;; roofline of a matrix-vector product whose matrix does not fit in cache: every weight is
;; read once (bench/lm.mjs). Memory: 4096 pages (256 MiB), grown by the caller if needed.
(module
  (memory (export "memory") 4096)
  (func (export "run") (param $bytes i32) (result f32)
    (local $p i32) (local $end i32)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128)
    (local $s4 v128) (local $s5 v128) (local $s6 v128) (local $s7 v128)
    (local.set $end (local.get $bytes))
    (block $done
      (loop $iter
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $s0 (f32x4.add (local.get $s0) (v128.load offset=0 (local.get $p))))
        (local.set $s1 (f32x4.add (local.get $s1) (v128.load offset=16 (local.get $p))))
        (local.set $s2 (f32x4.add (local.get $s2) (v128.load offset=32 (local.get $p))))
        (local.set $s3 (f32x4.add (local.get $s3) (v128.load offset=48 (local.get $p))))
        (local.set $s4 (f32x4.add (local.get $s4) (v128.load offset=64 (local.get $p))))
        (local.set $s5 (f32x4.add (local.get $s5) (v128.load offset=80 (local.get $p))))
        (local.set $s6 (f32x4.add (local.get $s6) (v128.load offset=96 (local.get $p))))
        (local.set $s7 (f32x4.add (local.get $s7) (v128.load offset=112 (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 128)))
        (br $iter)))
    (f32x4.extract_lane 0
      (f32x4.add (f32x4.add (f32x4.add (local.get $s0) (local.get $s1)) (f32x4.add (local.get $s2) (local.get $s3)))
                 (f32x4.add (f32x4.add (local.get $s4) (local.get $s5)) (f32x4.add (local.get $s6) (local.get $s7)))))))
