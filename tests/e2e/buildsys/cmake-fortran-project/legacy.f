C     SPDX-License-Identifier: BSD-3-Clause
C     A fixed-form (FORTRAN 77 style) external subroutine.
      SUBROUTINE LSCALE(U, N, F)
      INTEGER N, I
      DOUBLE PRECISION U(N), F
      DO 10 I = 1, N
         U(I) = U(I) * F
   10 CONTINUE
      END
