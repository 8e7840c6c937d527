! A Fortran OpenMP program on canopy's runtime (omp_lib's omp_*_ names).
program fortran_omp
  use omp_lib
  implicit none
  integer :: total, bad
  total = 0
  bad = 0
  !$omp parallel num_threads(4) reduction(+:total, bad)
  total = total + omp_get_thread_num() + 1
  if (omp_get_num_threads() /= 4) bad = bad + 1
  !$omp end parallel
  if (total /= 10 .or. bad /= 0) stop 1
  if (omp_get_level() /= 0 .or. omp_get_max_threads() < 1) stop 2
  print '(a)', 'fortran: ok'
end program
