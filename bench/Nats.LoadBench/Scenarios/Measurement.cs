namespace Nats.LoadBench.Scenarios;

/// <summary>One measured run. Expected is what the scenario can prove should have arrived;
/// a mismatch fails the run (and the smoke mode) instead of printing a flattering figure.</summary>
/// <remarks>A failover row also gives <see cref="FailoverMs"/>: from the leader's kill to the first acknowledged publish.</remarks>
internal sealed record Measurement(long Messages, double Seconds, long Expected, double? P50Us = null, double? P99Us = null, double? FailoverMs = null)
{
    public double MsgPerSec => Seconds > 0 ? Messages / Seconds : 0;

    public bool CountsOk => Messages == Expected;

    /// <summary>Scale rows: what the stream cost besides the consume rate (Messages/Seconds).</summary>
    public ScaleFigures? Scale { get; init; }
}

/// <summary>A large file stream's life: published, stopped cleanly, measured on disk, restarted, read.</summary>
internal sealed record ScaleFigures(double PublishMsgPerSec, double DiskMb, double RestartSeconds, double RssAfterRestartMb);
