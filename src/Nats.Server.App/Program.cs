using Microsoft.Extensions.Logging;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Logging;

// Temporary launcher for local measurement; replaced by the real command line (config branch).
var options = new ServerOptions();
for (var i = 0; i < args.Length; i++)
{
    switch (args[i])
    {
        case "-a": options.Host = args[++i]; break;
        case "-p": options.Port = int.Parse(args[++i]); break;
        case "-V": options.Trace = true; break;
        case "-c": i++; break;
    }
}
using var lf = LoggerFactory.Create(b => b.AddProvider(new GoStyleLoggerProvider(Console.Out, GoStyleLoggerProvider.LevelFor(false, options.Trace))).SetMinimumLevel(LogLevel.Trace));
var server = new NatsServer(options, lf);
await server.StartAsync();
var done = new TaskCompletionSource();
Console.CancelKeyPress += (_, e) => { e.Cancel = true; done.TrySetResult(); };
using var term = System.Runtime.InteropServices.PosixSignalRegistration.Create(System.Runtime.InteropServices.PosixSignal.SIGTERM, c => { c.Cancel = true; done.TrySetResult(); });
await done.Task;
await server.ShutdownAsync();
return 0;
