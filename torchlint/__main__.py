from torchlint.integrations.cli import main

main()
