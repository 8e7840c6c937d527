! A Fortran OpenMP program on canopy's runtime (omp_lib's omp_*_ names).
program fortran_omp
  use omp_lib
  implicit none
  integer :: total, n
  total = 0
  !$omp parallel num_threads(4) reduction(+:total)
  total = total + omp_get_thread_num() + 1
  n = omp_get_num_threads()
  !$omp end parallel
  if (total /= 10) stop 1
  print '(a)', 'fortran: ok'
end program
