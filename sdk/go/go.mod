module github.com/gatehouse/gatehouse/sdk/go

go 1.22
