namespace Nats.Storage;

internal static class StorageAssembly;
