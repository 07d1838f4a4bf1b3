/* The MPI program every scenario runs: each rank says who it is and where
 * it ran and as whom, after an all-reduce that proves the ranks reach each
 * other. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int rank, size, one = 1, sum = 0;
	char host[256] = "";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	gethostname(host, sizeof host - 1);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank=%d size=%d sum=%d uid=%d host=%s\n", rank, size, sum, (int)getuid(), host);
	MPI_Finalize();
	return 0;
}
