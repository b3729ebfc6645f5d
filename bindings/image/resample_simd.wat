;; The two passes of PIL's 8-bit convolution resampling (bindings/image/resample.js, their scalar twins and the
;; reference) with WebAssembly SIMD128, for attnwasm/image. The same integer arithmetic lane by lane: 22-bit
;; fixed-point weights, int32 sums starting at 1 << 21 (i32x4.add / mul wrap as C's int), >> 22 (arithmetic),
;; then clip to 0 … 255 by the saturating narrows (i32 → i16 → u8), as PIL's clip8 table does for every sum
;; it can meet. Assembled by tools/make_image_simd.mjs (wat2wasm) into resample_simd_wasm.js.
;;
;; Memory: exported, grown by the caller; every pointer is a byte offset. Reads may run up to 16 bytes past a
;; source's end, and the vertical pass writes up to 16 bytes past its destination's end: the caller leaves
;; that slack.
(module
  (memory (export "memory") 1)

  ;; Horizontal pass, RGB (3 bytes per pixel): `rows` rows of `src` (stride srcStride bytes) to `ncols` output
  ;; pixels each (stride dstStride), output pixel xx with taps bounds[2xx] … + bounds[2xx+1] - 1 and weights
  ;; kk[xx·ksize …] (int32). A pixel is loaded as 4 bytes and its 4th lane ignored; rows go two at a time.
  (func (export "h3") (param $src i32) (param $srcStride i32) (param $rows i32) (param $kk i32) (param $ksize i32)
                      (param $bounds i32) (param $ncols i32) (param $dst i32) (param $dstStride i32)
    (local $r i32) (local $xx i32) (local $t i32) (local $n i32) (local $p i32) (local $k i32) (local $o i32)
    (local $a v128) (local $b v128) (local $w v128) (local $pair i32)
    (local.set $r (i32.const 0))
    (block $rows_done
      (loop $rows_loop
        (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
        ;; two rows when there are two left
        (local.set $pair (i32.lt_u (i32.add (local.get $r) (i32.const 1)) (local.get $rows)))
        (local.set $xx (i32.const 0))
        (block $cols_done
          (loop $cols_loop
            (br_if $cols_done (i32.ge_u (local.get $xx) (local.get $ncols)))
            (local.set $n (i32.load offset=4 (i32.add (local.get $bounds) (i32.shl (local.get $xx) (i32.const 3)))))
            (local.set $p (i32.add
              (i32.add (local.get $src) (i32.mul (local.get $r) (local.get $srcStride)))
              (i32.mul (i32.load (i32.add (local.get $bounds) (i32.shl (local.get $xx) (i32.const 3)))) (i32.const 3))))
            (local.set $k (i32.add (local.get $kk) (i32.shl (i32.mul (local.get $xx) (local.get $ksize)) (i32.const 2))))
            (local.set $a (i32x4.splat (i32.const 2097152)))
            (local.set $b (local.get $a))
            (local.set $t (i32.const 0))
            (block $taps_done
              (loop $taps_loop
                (br_if $taps_done (i32.ge_u (local.get $t) (local.get $n)))
                (local.set $w (i32x4.splat (i32.load (local.get $k))))
                (local.set $a (i32x4.add (local.get $a) (i32x4.mul (local.get $w)
                  (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u (v128.load32_zero (local.get $p)))))))
                (if (local.get $pair)
                  (then (local.set $b (i32x4.add (local.get $b) (i32x4.mul (local.get $w)
                    (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u
                      (v128.load32_zero (i32.add (local.get $p) (local.get $srcStride))))))))))
                (local.set $p (i32.add (local.get $p) (i32.const 3)))
                (local.set $k (i32.add (local.get $k) (i32.const 4)))
                (local.set $t (i32.add (local.get $t) (i32.const 1)))
                (br $taps_loop)))
            (local.set $o (i32.add (i32.add (local.get $dst) (i32.mul (local.get $r) (local.get $dstStride)))
              (i32.mul (local.get $xx) (i32.const 3))))
            (local.set $a (i32x4.shr_s (local.get $a) (i32.const 22)))
            ;; 3 bytes stored (2 + 1): a 4-byte store would overwrite the next row's first byte
            (local.set $a (i8x16.narrow_i16x8_u (i16x8.narrow_i32x4_s (local.get $a) (local.get $a)) (i16x8.narrow_i32x4_s (local.get $a) (local.get $a))))
            (v128.store16_lane 0 (local.get $o) (local.get $a))
            (v128.store8_lane 2 (i32.add (local.get $o) (i32.const 2)) (local.get $a))
            (if (local.get $pair)
              (then
                (local.set $b (i32x4.shr_s (local.get $b) (i32.const 22)))
                (local.set $b (i8x16.narrow_i16x8_u (i16x8.narrow_i32x4_s (local.get $b) (local.get $b)) (i16x8.narrow_i32x4_s (local.get $b) (local.get $b))))
                (v128.store16_lane 0 (i32.add (local.get $o) (local.get $dstStride)) (local.get $b))
                (v128.store8_lane 2 (i32.add (i32.add (local.get $o) (local.get $dstStride)) (i32.const 2)) (local.get $b))))
            (local.set $xx (i32.add (local.get $xx) (i32.const 1)))
            (br $cols_loop)))
        (local.set $r (i32.add (local.get $r) (i32.add (local.get $pair) (i32.const 1))))
        (br $rows_loop))))

  ;; Vertical pass, any channel count: output row yy (0 … nrows - 1) of rowLen bytes = the rows
  ;; bounds[2yy] - rowOffset … of `src` (rowLen bytes each) weighted by kk[yy·ksize …]; 16 bytes at a time, the
  ;; last chunk of a row running into the slack.
  (func (export "v") (param $src i32) (param $rowLen i32) (param $kk i32) (param $ksize i32) (param $bounds i32)
                     (param $nrows i32) (param $dst i32) (param $rowOffset i32)
    (local $yy i32) (local $i i32) (local $t i32) (local $n i32) (local $p i32) (local $k i32) (local $base i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $w v128) (local $x v128) (local $h v128)
    (local.set $yy (i32.const 0))
    (block $rows_done
      (loop $rows_loop
        (br_if $rows_done (i32.ge_u (local.get $yy) (local.get $nrows)))
        (local.set $n (i32.load offset=4 (i32.add (local.get $bounds) (i32.shl (local.get $yy) (i32.const 3)))))
        (local.set $base (i32.add (local.get $src) (i32.mul (local.get $rowLen)
          (i32.sub (i32.load (i32.add (local.get $bounds) (i32.shl (local.get $yy) (i32.const 3)))) (local.get $rowOffset)))))
        (local.set $i (i32.const 0))
        (block $chunks_done
          (loop $chunks_loop
            (br_if $chunks_done (i32.ge_u (local.get $i) (local.get $rowLen)))
            (local.set $a0 (i32x4.splat (i32.const 2097152)))
            (local.set $a1 (local.get $a0)) (local.set $a2 (local.get $a0)) (local.set $a3 (local.get $a0))
            (local.set $p (i32.add (local.get $base) (local.get $i)))
            (local.set $k (i32.add (local.get $kk) (i32.shl (i32.mul (local.get $yy) (local.get $ksize)) (i32.const 2))))
            (local.set $t (i32.const 0))
            (block $taps_done
              (loop $taps_loop
                (br_if $taps_done (i32.ge_u (local.get $t) (local.get $n)))
                (local.set $w (i32x4.splat (i32.load (local.get $k))))
                (local.set $x (v128.load (local.get $p)))
                (local.set $h (i16x8.extend_low_i8x16_u (local.get $x)))
                (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (local.get $w) (i32x4.extend_low_i16x8_u (local.get $h)))))
                (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (local.get $w) (i32x4.extend_high_i16x8_u (local.get $h)))))
                (local.set $h (i16x8.extend_high_i8x16_u (local.get $x)))
                (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (local.get $w) (i32x4.extend_low_i16x8_u (local.get $h)))))
                (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (local.get $w) (i32x4.extend_high_i16x8_u (local.get $h)))))
                (local.set $p (i32.add (local.get $p) (local.get $rowLen)))
                (local.set $k (i32.add (local.get $k) (i32.const 4)))
                (local.set $t (i32.add (local.get $t) (i32.const 1)))
                (br $taps_loop)))
            (v128.store
              (i32.add (i32.add (local.get $dst) (i32.mul (local.get $yy) (local.get $rowLen))) (local.get $i))
              (i8x16.narrow_i16x8_u
                (i16x8.narrow_i32x4_s (i32x4.shr_s (local.get $a0) (i32.const 22)) (i32x4.shr_s (local.get $a1) (i32.const 22)))
                (i16x8.narrow_i32x4_s (i32x4.shr_s (local.get $a2) (i32.const 22)) (i32x4.shr_s (local.get $a3) (i32.const 22)))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $chunks_loop)))
        (local.set $yy (i32.add (local.get $yy) (i32.const 1)))
        (br $rows_loop))))
)
