! omp_where_f: the Fortran twin of examples/omp_where.cpp, for the tests of
! `canopy run` (a real gfortran-compiled OpenMP program, through omp_lib).
! It prints which shared object provides the OpenMP API (omp_where_f_rt.c),
! then one line per thread of a parallel region in omp_where's format, and
! checks from inside the program that each thread runs on a CPU of the place
! the runtime says it is bound to (omp_get_place_num, omp_get_place_proc_ids).
! Exit status 1 when a thread is outside its place.
program omp_where_f
  use omp_lib
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function sched_getcpu() bind(C, name="sched_getcpu")
      import :: c_int
    end function sched_getcpu
    subroutine print_runtime() bind(C, name="omp_where_f_print_runtime")
    end subroutine print_runtime
  end interface
  integer :: t, n, cpu, place, nprocs, outside
  integer, allocatable :: ids(:)
  character(len=8) :: status

  call print_runtime()
  outside = 0
  !$omp parallel private(t, n, cpu, place, nprocs, ids, status) reduction(+:outside)
  t = omp_get_thread_num()
  n = omp_get_num_threads()
  cpu = sched_getcpu()
  place = omp_get_place_num()
  status = 'unbound'
  if (place >= 0) then
    nprocs = omp_get_place_num_procs(place)
    allocate(ids(nprocs))
    call omp_get_place_proc_ids(place, ids)
    if (any(ids == cpu)) then
      status = 'inplace'
    else
      status = 'OUTSIDE'
      outside = outside + 1
    end if
    deallocate(ids)
  end if
  !$omp critical
  print '(A,I0,A,I0,A,I0,A,I0,A,A)', 'omp_where: region=0 thread=', t, ' of=', n, ' cpu=', cpu, &
        ' bound=? place=', place, ' ', trim(status)
  !$omp end critical
  !$omp end parallel
  if (outside > 0) stop 1
end program omp_where_f
