/* Estimates pi as mpi-operator's pi example does: every rank integrates
 * 4/(1+x^2) over its share of the steps and rank 0 sums the shares. Each
 * rank says where it ran, so that a run can be judged by what it printed. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int rank, size;
	char host[256];
	const long steps = 100000000;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	gethostname(host, sizeof host);
	double step = 1.0 / steps, sum = 0;
	for (long i = rank; i < steps; i += size) {
		double x = (i + 0.5) * step;
		sum += 4.0 / (1.0 + x * x);
	}
	double share = sum * step, pi = 0;
	MPI_Reduce(&share, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	printf("rank %d of %d on %s uid %d\n", rank, size, host, (int)getuid());
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("pi is approximately %.10f\n", pi);
	MPI_Finalize();
	return 0;
}
