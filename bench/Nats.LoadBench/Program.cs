Console.WriteLine("loadbench");
