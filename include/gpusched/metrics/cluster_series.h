// The series of a cluster snapshot: nodes, bound and GPU pods, each GPU resource's allocatable and
// allocated units per product, FGD's fragmentation (cluster/cluster_fragmentation.h), free GPUs
// per topology domain (bounded: the largest domains per level, the rest as one), and pod groups
// by state. The
// server registers them for the snapshot it serves (app/server_app.h). Pure; thread-safe.
#pragma once

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/metrics/series_writer.h"

namespace gpusched {

void WriteClusterSeries(const ClusterSnapshot& snapshot, SeriesWriter& out);

}  // namespace gpusched
