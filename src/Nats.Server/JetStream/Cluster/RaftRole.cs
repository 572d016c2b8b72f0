namespace Nats.Server.JetStream.Cluster;

internal enum RaftRole
{
    Follower,
    Candidate,
    Leader,
}
